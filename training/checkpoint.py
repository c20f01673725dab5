"""Writing checkpoints (and their torch side): safetensors for every tensor, JSON metadata in the header.

The file format (tensor names, the header's ``smear`` metadata object) is specified in
:mod:`smear_env.agents.checkpoint`, which also reads checkpoints, checks them against the environment and
plays them with numpy (no torch needed to play). This module writes them atomically (:func:`save_tensors`,
:func:`base_metadata`) and loads a policy's weights as torch tensors (:func:`load_policy_state`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save

from smear_env.agents.checkpoint import (
    ENV_VERSION,
    FORMAT,
    META_KEY,
    check_compatible,
    obs_layout_hash,
    prefixed,
    read_checkpoint,
)
from smear_env.core.actions import NUM_ACTIONS
from smear_env.core.config import SmearRules
from smear_env.engine.observation import OBS_SIZE


def network_metadata(network: Any) -> dict[str, Any]:
    """The ``network`` entry of a checkpoint's metadata from a config's ``network`` block (hidden sizes,
    activation, and ``suit_canonical`` only when set, so older files read the same)."""
    net = {"hidden_sizes": network.hidden_sizes, "activation": network.activation}
    if network.suit_canonical:
        net["suit_canonical"] = True
    return net


def base_metadata(rules: SmearRules, network: dict[str, Any], algorithm: str, step: int,
                  training: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata every checkpoint file carries: format, environment version, observation layout, action
    count, rules, network, algorithm, learner step and the training config."""
    return {
        "format": FORMAT,
        "env_version": ENV_VERSION,
        "obs_size": OBS_SIZE,
        "obs_layout_hash": obs_layout_hash(),
        "num_actions": NUM_ACTIONS,
        "rules": rules.to_dict(),
        "network": network,
        "algorithm": algorithm,
        "step": int(step),
        "training": training or {},
    }


# --------------------------------------------------------------------------------------------- write
def _write_error(path: Path, e: BaseException) -> OSError:
    """An OSError saying why ``path`` could not be written, from an OSError or safetensors' SafetensorError
    (which a full disk raises: "Error while serializing: I/O error: No space left on device (os error
    28)")."""
    if isinstance(e, OSError):
        return OSError(e.errno, e.strerror or str(e), str(path))
    text = str(e)
    m = re.search(r"(?:I/O error: )?([^:]*?) \(os error (\d+)\)\s*$", text)
    if m:
        return OSError(int(m.group(2)), m.group(1).strip(), str(path))
    return OSError(errno.EIO, text[:300], str(path))


TEMP_SUFFIX = ".tmp"
"""The suffix of :func:`write_atomic`'s temporary files: ``<name>.<random>.tmp`` next to ``<name>``."""
_OWN_TEMP = re.compile(r".+\.[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX))
_SAFETENSORS_TEMP = re.compile(r"\.tmp[A-Za-z0-9]{6}")


def is_temporary_file(name: str) -> bool:
    """Whether a file name is a temporary file a killed checkpoint write leaves behind: the
    ``<name>.<random>.tmp`` of :func:`write_atomic`, or the ``.tmpXXXXXX`` of safetensors' own file writer
    (``safetensors.numpy.save_file``, which this module does not call: it leaves that file when killed)."""
    return bool(_OWN_TEMP.fullmatch(name) or _SAFETENSORS_TEMP.fullmatch(name))


def write_atomic(path: str | Path, write: Callable[[str], None]) -> None:
    """Write ``path`` atomically: ``write(tmp)`` fills a temporary file in the same folder
    (``<name>.<random>.tmp``, :func:`is_temporary_file`), which then replaces ``path`` (os.replace), so a
    failed or interrupted write leaves the old file as it was and no partial file; a killed write leaves
    only that temporary file, which ``smear-train --resume`` / ``--overwrite`` remove. A write that fails (a
    full disk: OSError or safetensors' SafetensorError) raises OSError naming ``path``; the temporary file
    is removed."""
    path = Path(path)  # a symbolic link at ``path`` is replaced by the file, never written through
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=TEMP_SUFFIX, dir=path.parent)
    os.close(fd)
    try:
        try:
            write(tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except OSError as e:
            raise _write_error(path, e) from None
        except Exception as e:
            if type(e).__name__ != "SafetensorError":
                raise
            raise _write_error(path, e) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text_atomic(path: str | Path, text: str) -> None:
    """:func:`write_atomic` of a UTF-8 text."""
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def save_tensors(path: str | Path, tensors: dict[str, Any], meta: dict[str, Any]) -> None:
    """Write atomically (temp file in the same folder + os.replace, :func:`write_atomic`). ``tensors``:
    name -> torch tensor or numpy array. The safetensors bytes are made in memory and written to
    :func:`write_atomic`'s temporary file (safetensors' ``save_file`` would write through a temporary file
    of its own, ``.tmpXXXXXX``, that a killed write leaves behind). A failed write (a full disk) raises
    OSError and leaves any earlier file at ``path`` intact."""

    arrays = {}
    for k, v in tensors.items():
        if hasattr(v, "detach"):
            v = v.detach().cpu().contiguous().numpy()
        arrays[k] = np.ascontiguousarray(v)
    header = {META_KEY: json.dumps(meta)}
    data = save(arrays, metadata=header)
    write_atomic(path, lambda tmp: write_bytes(tmp, data))


def write_bytes(path: str, data: bytes) -> None:
    """Fill the file ``path`` with ``data``: how :func:`save_tensors` writes a checkpoint's bytes into its
    temporary file."""
    with open(path, "wb") as f:
        f.write(data)


def policy_tensors(state: dict[str, Any]) -> dict[str, Any]:
    """A policy's state dict under the checkpoint's tensor names (``policy.<param>``)."""
    return {f"policy.{k}": v for k, v in state.items()}


def save_policy(path: str | Path, state: dict[str, Any], meta: dict[str, Any]) -> None:
    """:func:`save_tensors` of a policy's state dict alone (a file that plays, with no training state)."""
    save_tensors(path, policy_tensors(state), meta)


def load_policy_state(
    path: str | Path, rules: SmearRules | None = None, *, warn_corrections: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(policy state dict as torch tensors, metadata), checked like :func:`load_agent` (needs torch). The
    policy network alone: a checkpoint's advantage corrections (``corrections``) are not part of it, and
    (``warn_corrections``) a ``UserWarning`` says so when it has any."""

    import torch  # lazy: heavy (torch)

    tensors, meta = read_checkpoint(path)
    check_compatible(meta, path, rules)
    n = len(meta.get("corrections") or [])
    if n and warn_corrections:
        warnings.warn(f"checkpoint {str(path)!r} has {n} advantage correction(s) that its policy network "
                      "does not include: what is trained from it starts from the uncorrected policy",
                      stacklevel=2)
    return {k: torch.from_numpy(v.copy()) for k, v in prefixed(tensors, "policy.").items()}, meta


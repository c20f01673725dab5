// The web table: one person's seat; everything shown comes from the seat view the server sends.
"use strict";
const params = new URLSearchParams(location.search);
const DELAY = params.has("speed") ? Number(params.get("speed")) : 350;   // ms between agent moves
const REL = ["you", "left", "partner", "right"];
let game = null;          // {id, seat, players}
let state = null;         // last answer of the server
let pending = [];         // trick cards shown while events play out
let busy = false;

const $ = (id) => document.getElementById(id);
const rel = (seat) => (seat - game.seat + 4) % 4;
const seatName = (s) => {
  const p = game.players[s];
  const short = p.endsWith(".safetensors") ? p.split("/").pop().replace(".safetensors", "") : p;
  return s === game.seat ? "You" : `${REL[rel(s)][0].toUpperCase() + REL[rel(s)].slice(1)} (${esc(short)})`;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function setup() {
  const cfg = await api("GET", "/api/config");
  for (const sel of document.querySelectorAll(".agent-select"))
    for (const a of cfg.agents) sel.add(new Option(a.endsWith(".safetensors") ? `${a.split("/").pop()} (shipped)` : a, a));
  const box = $("rule-fields");
  for (const [name, o] of Object.entries(cfg.rules)) {
    const label = document.createElement("label");
    label.textContent = name.replaceAll("_", " ");
    let input;
    if (o.type === "bool") {
      input = document.createElement("select");
      input.add(new Option("no", "false")); input.add(new Option("yes", "true"));
      input.value = String(o.default);
    } else if (o.choices) {
      input = document.createElement("select");
      for (const c of o.choices) input.add(new Option(String(c), String(c)));
      input.value = String(o.default);
    } else {
      input = document.createElement("input"); input.type = "number"; input.min = "1"; input.value = o.default;
    }
    input.name = "rule:" + name; input.dataset.type = o.type;
    label.appendChild(input); box.appendChild(label);
  }
  $("deal").onclick = deal;
  $("hint").onclick = hint;
  $("next").onclick = () => send("POST", `/api/games/${game.id}/next`);
  $("resign").onclick = () => send("POST", `/api/games/${game.id}/resign`);
  $("new-game").onclick = () => { show($("setup"), true); window.scrollTo(0, 0); };
}

async function deal() {
  const f = $("setup-form");
  const body = { seat: Number(f.seat.value), partner: f.partner.value, opponents: f.opponents.value, rules: {} };
  if (f.seed.value !== "") body.seed = Number(f.seed.value);
  for (const input of f.querySelectorAll("[name^='rule:']")) {
    const name = input.name.slice(5), t = input.dataset.type;
    body.rules[name] = t === "bool" ? input.value === "true" : t === "int" ? Number(input.value) : input.value;
  }
  show($("setup-error"), false);
  try {
    const s = await api("POST", "/api/games", body);
    game = { id: s.game_id, seat: s.seat, players: s.players };
    history.replaceState(null, "", `?game=${s.game_id}` + (params.has("speed") ? `&speed=${DELAY}` : ""));
    show($("game"), true); show($("log-panel"), true); show($("setup"), false);
    $("log").innerHTML = ""; pending = []; drawTrick([], null);
    log(`New game: you sit in seat ${s.seat}.`);
    await receive(s);
  } catch (e) {
    $("setup-error").textContent = e.message; show($("setup-error"), true);
  }
}

async function send(method, path, body) {
  if (busy) return;
  busy = true;
  show($("error"), false); show($("hints"), false);
  try {
    await receive(await api(method, path, body));
  } catch (e) {
    $("error").textContent = e.message; show($("error"), true);
  } finally {
    busy = false;
  }
}

function log(text) {
  const line = document.createElement("div");
  line.textContent = text;
  $("log").appendChild(line);
  $("log").scrollTop = $("log").scrollHeight;
}

async function receive(s) {
  // Play the public events one by one (cards land on the felt), then show the seat view.
  for (const e of s.events) {
    let text = `${seatName(e.seat)}: ${moveText(e.name)}`;
    if (e.name.startsWith("play ")) {
      pending.push({ seat: e.seat, card: e.name.slice(5) });
      drawTrick(pending, null);
    }
    if (e.trick_winner !== undefined) {
      text += `  → trick to ${seatName(e.trick_winner)}`;
      drawTrick(pending, e.trick_winner);
      pending = [];
    }
    log(text);
    if (DELAY && e.seat !== game.seat) await sleep(DELAY);
  }
  state = s;
  render();
}

function drawTrick(plays, winner) {
  for (const slot of document.querySelectorAll("#trick .slot")) slot.innerHTML = "";
  for (const p of plays) document.querySelector(`#trick .slot[data-rel="${rel(p.seat)}"]`).appendChild(cardEl(p.card));
  $("trick-note").textContent = winner === null ? "" : `won by ${seatName(winner)}`;
}

function render() {
  const v = state.view, me = v.team;
  const trump = v.trump ? SUITS[v.trump] : v.contract ? "not shown yet" : "–";
  $("info").innerHTML = `<span>Hand <b>${state.hand_number}</b></span>` +
    `<span>You+partner <b>${v.scores[me]}</b> · Opponents <b>${v.scores[1 - me]}</b> (to ${v.target_score})</span>` +
    `<span>Dealer: <b>${seatName(v.dealer)}</b></span>` +
    (v.contract ? `<span>Contract: <b>${v.contract}</b> by ${seatName(v.bidder)}</span>` : "") +
    `<span>Trump: <b>${trump}</b></span>`;
  for (const el of document.querySelectorAll("#felt .seat")) {
    const s = (game.seat + Number(el.dataset.rel)) % 4;
    const bid = v.bids[s] === null ? "" : v.bids[s] === "pass" ? "passed" : `bid ${v.bids[s]}`;
    el.className = el.className.replace(" turn", "") + (v.to_act === s ? " turn" : "");
    el.innerHTML = `<div class="name">${seatName(s)}${s === v.dealer ? " · dealer" : ""}</div>` +
      `<div class="meta">${bid}${v.bidder === s ? " · bidder" : ""}</div>`;
    if (s !== game.seat) {
      const backs = document.createElement("div"); backs.className = "backs";
      for (let i = 0; i < v.hand_sizes[s]; i++) { const b = document.createElement("span"); b.className = "back"; backs.appendChild(b); }
      el.appendChild(backs);
    }
  }
  if (v.trick.length) { pending = v.trick.map((t) => ({ seat: t.seat, card: t.card })); drawTrick(pending, null); }
  // the hand: legal cards are clickable
  const legal = new Map(v.legal_actions.map((a) => [a.name, a.id]));
  const hand = $("hand"); hand.innerHTML = "";
  for (const c of sortHand(v.hand, v.trump)) {
    const el = cardEl(c);
    if (v.trump && c[1] === v.trump) el.classList.add("trump");
    const id = legal.get(`play ${c}`) ?? legal.get(`discard ${c}`);
    if (id !== undefined) {
      el.classList.add("legal");
      el.onclick = () => send("POST", `/api/games/${game.id}/actions`, { action: id });
    }
    hand.appendChild(el);
  }
  // bids and trump are buttons
  const moves = $("moves"); moves.innerHTML = "";
  for (const a of v.legal_actions) {
    if (a.name.startsWith("play ") || a.name.startsWith("discard ")) continue;
    const b = document.createElement("button");
    b.textContent = moveText(a.name); b.dataset.action = a.id; b.className = "move";
    b.onclick = () => send("POST", `/api/games/${game.id}/actions`, { action: a.id });
    moves.appendChild(b);
  }
  const prompt = $("prompt");
  const phaseText = { BIDDING: "Your bid", TRUMP: "Name trump", DISCARD: `Discard (${v.kitty_size - v.discards.length} more)`, PLAY: "Your card" };
  if (v.legal_actions.length) { prompt.textContent = phaseText[v.phase] + (v.kitty.length ? ` — you took ${v.kitty.map(cardText).join(" ")}` : ""); show(prompt, true); }
  else show(prompt, false);
  $("hint").disabled = !v.legal_actions.length;
  // results
  const over = state.over, handOver = v.phase === "HAND_OVER" && !over;
  show($("next"), handOver);
  show($("resign"), !over);
  show($("new-game"), over);
  const res = $("result");
  if (v.hand_result) {
    const r = v.hand_result;
    if (r.thrown_in) res.textContent = "Everybody passed: the hand is thrown in.";
    else {
      const who = (t) => (t === null ? "nobody" : t === me ? "you+partner" : "opponents");
      res.innerHTML = `Hand over — high: <b>${who(r.points.high)}</b>, low: <b>${who(r.points.low)}</b>, jack: <b>${who(r.points.jack)}</b>, game: <b>${who(r.points.game)}</b>. ` +
        `${seatName(v.bidder)} ${r.made_contract ? "made" : "went set on"} the ${v.contract} bid. Scores: you+partner ${r.scores[me]}, opponents ${r.scores[1 - me]}.`;
    }
    show(res, true);
  } else show(res, false);
  if (over) {
    let text = state.error ? `Game stopped: ${state.error}` : state.truncated ? "The game stopped at the hand limit." :
      state.winner === me ? "You win the game!" : "The opponents win the game.";
    res.innerHTML = (res.classList.contains("hidden") ? "" : res.innerHTML + "<br>") + `<b id="game-over">${esc(text)}</b>`;
    show(res, true);
    $("replay-link").href = `/replay?game=${game.id}`; show($("replay-link"), true);
    $("record-link").href = `/api/games/${game.id}/record`; show($("record-link"), true);
  }
  if (state.error && !over) { $("error").textContent = state.error; show($("error"), true); }
}

async function hint() {
  try {
    const h = await api("GET", `/api/games/${game.id}/hint`);
    $("hints").innerHTML = h.hints.map((x) => {
      const p = x.probabilities ? " (" + x.probabilities.slice(0, 4).map((q) => `${moveText(q.name)} ${(100 * q.p).toFixed(0)}%`).join(", ") + ")" : "";
      return `<div><b>${esc(x.agent.split("/").pop())}</b> would <b>${moveText(x.name)}</b>${p}</div>`;
    }).join("");
    show($("hints"), true);
  } catch (e) { $("error").textContent = e.message; show($("error"), true); }
}

async function resume(id) {
  try {
    const s = await api("GET", `/api/games/${id}`);
    game = { id, seat: s.seat, players: s.players };
    show($("game"), true); show($("log-panel"), true); show($("setup"), false);
    await receive(s);
  } catch (e) { $("setup-error").textContent = e.message; show($("setup-error"), true); }
}

setup().then(() => { if (params.get("game")) resume(params.get("game")); });

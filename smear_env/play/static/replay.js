// The replay viewer: frames computed by the server from a smear-record/1 game, every hand face up.
"use strict";
let R = null, i = 0;
const $ = (id) => document.getElementById(id);
const TEAM = (s) => `team ${s % 2}`;
const short = (p) => esc(String(p).endsWith(".safetensors") ? String(p).split("/").pop().replace(".safetensors", "") : p);
const who = (s) => `seat ${s} (${short(R.players[s])})`;

function load(data) {
  R = data; i = 0;
  $("slider").max = R.frames.length - 1;
  show($("viewer"), true); show($("scores-panel"), true); show($("open-error"), false);
  scoreTable();
  draw();
}

function fail(msg) { $("open-error").textContent = msg; show($("open-error"), true); }

$("file").onchange = async () => {
  const f = $("file").files[0];
  if (!f) return;
  try {
    load(await api("POST", `/api/replay?index=${Number($("index").value) || 0}`, await f.text()));
  } catch (e) { fail(e.message); }
};

function go(k) { i = Math.max(0, Math.min(R.frames.length - 1, k)); draw(); }
function handStart(dir) {
  const h = R.frames[i].hand + dir;
  const k = R.frames.findIndex((f) => f.hand === h);
  if (k >= 0) go(k); else go(dir < 0 ? 0 : R.frames.length - 1);
}
$("first").onclick = () => go(0);
$("last").onclick = () => go(R.frames.length - 1);
$("prev").onclick = () => go(i - 1);
$("next").onclick = () => go(i + 1);
$("prev-hand").onclick = () => handStart(R.frames[i].actor === undefined ? -1 : 0);
$("next-hand").onclick = () => handStart(1);
$("slider").oninput = () => go(Number($("slider").value));
document.addEventListener("keydown", (e) => {
  if (!R) return;
  const k = { ArrowRight: () => go(i + 1), ArrowLeft: () => go(i - 1), Home: () => go(0),
              End: () => go(R.frames.length - 1), PageDown: () => handStart(1), PageUp: () => handStart(0) }[e.key];
  if (k) { k(); e.preventDefault(); }
});

function draw() {
  const f = R.frames[i];
  $("slider").value = i;
  $("counter").textContent = `step ${i} / ${R.frames.length - 1}`;
  $("info").innerHTML = `<span>Hand <b>${f.hand + 1}</b> of ${R.hands.length}</span>` +
    `<span>Scores: team 0 <b>${f.scores[0]}</b> · team 1 <b>${f.scores[1]}</b></span>` +
    `<span>Dealer: <b>${who(f.dealer)}</b></span>` +
    (f.contract ? `<span>Contract <b>${f.contract}</b> by ${who(f.bidder)}</span>` : "") +
    `<span>Trump: <b>${f.trump ? SUITS[f.trump] : "–"}</b></span>` +
    `<span>Tricks: ${f.tricks_won[0]} – ${f.tricks_won[1]}</span>`;
  for (const el of document.querySelectorAll("#felt .seat")) {
    const s = Number(el.dataset.seat);
    const bid = f.bids[s] === null ? "" : f.bids[s] === "pass" ? "passed" : `bid ${f.bids[s]}`;
    el.className = el.className.replace(" turn", "") + (f.to_act === s ? " turn" : "");
    el.innerHTML = `<div class="name">${who(s)}${s === f.dealer ? " · dealer" : ""}</div>` +
      `<div class="meta">${TEAM(s)}${bid ? " · " + bid : ""}${f.bidder === s ? " · bidder" : ""}</div>`;
    const hand = document.createElement("div"); hand.className = "faceup";
    for (const c of sortHand(f.hands[s], f.trump)) hand.appendChild(cardEl(c, { small: true }));
    el.appendChild(hand);
  }
  for (const slot of document.querySelectorAll("#trick .slot")) slot.innerHTML = "";
  const plays = f.last_trick ? f.last_trick.plays : f.trick;
  for (const p of plays) document.querySelector(`#trick .slot[data-seat="${p.seat}"]`).appendChild(cardEl(p.card));
  $("trick-note").textContent = f.last_trick ? `won by ${who(f.last_trick.winner)}` : "";
  let text;
  if (f.actor === undefined) text = `Hand ${f.hand + 1}: ${who(f.dealer)} deals.`;
  else text = `${who(f.actor)}: ${moveText(f.action)}`;
  if (f.kitty.length && f.action && f.action.startsWith("trump"))
    text += ` — kitty taken: ${f.kitty.map(cardText).join(" ")}`;
  if (f.discards.length && f.action && f.action.startsWith("discard"))
    text += ` — discards so far: ${f.discards.map(cardText).join(" ")}`;
  if (f.thrown_in) text += " — everybody passed: thrown in.";
  if (f.hand_result) {
    const r = f.hand_result, t = (x) => (x === null ? "nobody" : `team ${x}`);
    text += ` — hand over: high ${t(r.points.high)}, low ${t(r.points.low)}, jack ${t(r.points.jack)}, game ${t(r.points.game)}` +
      ` (card points ${r.card_points[0]}–${r.card_points[1]}); contract ${r.made_contract ? "made" : "set"}; scores ${r.scores[0]}–${r.scores[1]}.`;
  }
  $("step").textContent = text;
  const probs = $("probs");
  if (f.probabilities) {
    probs.innerHTML = `<b>${short(R.players[f.actor])}</b>'s probabilities at this decision:` +
      f.probabilities.slice(0, 8).map((p) => `<div class="barline"><span style="width: 8em">${moveText(p.name)}</span>` +
        `<span class="fill" style="width: ${Math.max(2, 240 * p.p)}px"></span><span>${(100 * p.p).toFixed(1)}%</span></div>`).join("");
    show(probs, true);
  } else show(probs, false);
  for (const row of document.querySelectorAll("#scores tr[data-hand]"))
    row.classList.toggle("current", Number(row.dataset.hand) === f.hand);
}

function scoreTable() {
  const t = (x) => (x === null || x === undefined ? "–" : String(x));
  let html = "<tr><th>hand</th><th>dealer</th><th>bidder</th><th>contract</th><th>trump</th><th>high</th><th>low</th><th>jack</th><th>game</th><th>change</th><th>scores</th></tr>";
  for (const h of R.hands) {
    const p = h.points || {};
    html += `<tr data-hand="${h.hand}"><td>${h.hand + 1}</td><td>${h.dealer}</td>` +
      (h.thrown_in ? `<td colspan="9">all passed: thrown in</td>` :
        `<td>${t(h.bidder)}</td><td>${t(h.contract)}${h.made_contract === false ? " (set)" : ""}</td><td>${h.trump ? SUITS[h.trump] : "–"}</td>` +
        `<td>${t(p.high)}</td><td>${t(p.low)}</td><td>${t(p.jack)}</td><td>${t(p.game)}</td>` +
        `<td>${h.score_change ? h.score_change.join(" / ") : "–"}</td><td>${h.scores ? h.scores.join(" – ") : h.incomplete ? "(unfinished)" : "–"}</td>`) + "</tr>";
  }
  html += `<tr><td colspan="11">Final: ${R.final_scores.join(" – ")}; ${R.winner === null ? "no winner" : `team ${R.winner} wins`}. ` +
    `Players: ${R.players.map((p, s) => `${s}: ${short(p)}`).join(", ")}` +
    (R.probabilities_for.length ? `; probabilities shown for ${R.probabilities_for.map(short).join(", ")}` : "") + "</td></tr>";
  $("scores").innerHTML = html;
}

const gid = new URLSearchParams(location.search).get("game");
if (gid) api("GET", `/api/games/${gid}/replay`).then(load).catch((e) => fail(e.message));

// The replay viewer: frames computed by the server from a smear-record/1 game, every hand face up.
"use strict";
let R = null, i = 0, viewSeat = 0, known = false, file = null;
const $ = (id) => document.getElementById(id);
const TEAMS = ["Team A", "Team B"];   // team A: seats 1 and 3; team B: seats 2 and 4
const team = (t) => (t === null || t === undefined ? "nobody" : TEAMS[t] + (known && t === (viewSeat & 1) ? " (you)" : ""));
const num = (n) => (n < 0 ? `−${-n}` : `${n}`);                 // a real minus sign: "9 – −6" reads
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0");
const who = (s) => `seat ${s + 1} (${esc(R.players[s])})`;
const rel = (s) => (s - viewSeat + 4) % 4;

function load(data) {
  R = data; i = 0;
  if (data.view_seat !== undefined && data.view_seat !== null) { viewSeat = data.view_seat; known = true; }
  $("view-seat").value = String(viewSeat);
  $("slider").max = R.frames.length - 1;
  show($("viewer"), true); show($("scores-panel"), true); show($("open-error"), false);
  const more = $("more-hands");
  if (R.hand_to < R.hands_total || R.hand_from > 0) {
    more.innerHTML = `Hands ${R.hand_from + 1}–${R.hand_to} of ${R.hands_total} are shown. ` +
      (R.hand_to < R.hands_total ? `<button type="button" id="later">Show hands ${R.hand_to + 1}…</button>` : "");
    show(more, true);
    const later = $("later");
    if (later) later.onclick = () => open(R.hand_to);
  } else show(more, false);
  scoreTable();
  draw();
}

function fail(msg) { $("open-error").textContent = msg; show($("open-error"), true); }

async function open(handFrom) {
  try {
    const q = `hand_from=${handFrom || 0}`;
    if (file !== null) load(await api("POST", `/api/replay?index=${Number($("index").value) || 0}&${q}`, file));
    else load(await api("GET", `/api/games/${gid}/replay?${q}`));
  } catch (e) { fail(e.message); }
}

$("file").onchange = async () => {
  const f = $("file").files[0];
  if (!f) return;
  file = await f.text();
  known = false;
  open(0);
};
$("view-seat").onchange = () => { viewSeat = Number($("view-seat").value); if (R) { scoreTable(); draw(); } };

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
  if (!R || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  const k = { ArrowRight: () => go(i + 1), ArrowLeft: () => go(i - 1), Home: () => go(0),
              End: () => go(R.frames.length - 1), PageDown: () => handStart(1), PageUp: () => handStart(0) }[e.key];
  if (k) { k(); e.preventDefault(); }
});

function pointText(d) {
  if (!d) return "";
  if (!d.card) return " (not played)";
  return ` (${cardText(d.card)} by seat ${d.played_by + 1}${d.won_by !== undefined && d.won_by !== d.played_by ? `, won by seat ${d.won_by + 1}` : ""})`;
}

function draw() {
  const f = R.frames[i];
  $("slider").value = i;
  $("counter").textContent = `step ${i} / ${R.frames.length - 1}`;
  $("info").innerHTML = `<span>Hand <b>${f.hand + 1}</b> of ${R.hands.length}</span>` +
    `<span>Scores: ${team(0)} <b>${num(f.scores[0])}</b> · ${team(1)} <b>${num(f.scores[1])}</b></span>` +
    `<span>Dealer: <b>${who(f.dealer)}</b></span>` +
    (f.contract ? `<span>Contract <b>${f.contract}</b> by ${who(f.bidder)}</span>` : "") +
    `<span>Trump: <b>${f.trump ? SUITS[f.trump] : "–"}</b></span>` +
    `<span>Tricks: ${TEAMS[0]} ${f.tricks_won[0]} · ${TEAMS[1]} ${f.tricks_won[1]}</span>`;
  for (const el of document.querySelectorAll("#felt .seat")) {
    const s = (viewSeat + Number(el.dataset.rel)) % 4;
    const bid = f.bids[s] === null ? "" : f.bids[s] === "pass" ? "passed" : `bid ${f.bids[s]}`;
    el.classList.toggle("turn", f.to_act === s);
    el.innerHTML = `<div class="name">${who(s)}${s === f.dealer ? " · dealer" : ""}</div>` +
      `<div class="meta">${team(s % 2)}${bid ? " · " + bid : ""}${f.bidder === s ? " · bidder" : ""}</div>`;
    const hand = document.createElement("div"); hand.className = "faceup";
    for (const c of sortHand(f.hands[s], f.trump)) hand.appendChild(cardEl(c, { small: true }));
    el.appendChild(hand);
  }
  for (const slot of document.querySelectorAll("#trick .slot")) slot.innerHTML = "";
  const plays = f.last_trick ? f.last_trick.plays : f.trick;
  const winner = f.last_trick ? f.last_trick.winner : null;
  plays.forEach((p, k) => document.querySelector(`#trick .slot[data-rel="${rel(p.seat)}"]`).appendChild(trickCard(p, k, winner)));
  $("trick-note").innerHTML = f.last_trick ? `led by ${who(f.last_trick.plays[0].seat)} · won by ${who(f.last_trick.winner)}`
    : plays.length ? `led by ${who(plays[0].seat)}` : "";
  let text;
  if (f.actor === undefined) text = `Hand ${f.hand + 1}: ${who(f.dealer)} deals.`;
  else text = `${who(f.actor)}: ${moveText(f.action)}`;
  if (f.kitty.length && f.action && f.action.startsWith("trump"))
    text += ` — kitty taken: ${f.kitty.map(cardText).join(" ")}`;
  if (f.discards.length && f.action && f.action.startsWith("discard"))
    text += ` — discards so far: ${f.discards.map(cardText).join(" ")}`;
  if (f.thrown_in) text += " — everybody passed: thrown in, the same dealer deals again.";
  $("step").innerHTML = text;
  const he = f.hand_end, box = $("hand-end");
  if (he) {
    const row = (k) => `<tr><th>${k}</th><td>${team(he.points[k].team)}</td><td>${k === "game" ?
      `card points ${TEAMS[0]} ${he.points.game.card_points[0]} · ${TEAMS[1]} ${he.points.game.card_points[1]}` +
      (he.points.game.discard_points ? ` (${team(he.bidder & 1)}: ${he.points.game.discard_points} of them from the bidder's discards)` : "") :
      pointText(he.points[k]).replace(/^ \(|\)$/g, "")}</td></tr>`;
    box.innerHTML = `<h3>Hand ${f.hand + 1} is over</h3><table class="points">${["high", "low", "jack", "game"].map(row).join("")}</table>` +
      `<p>${who(he.bidder)} bid ${he.contract}: ${he.made_contract ? '<span class="made">made</span>' : '<span class="set">went set</span>'}. ` +
      `Score change ${TEAMS[0]} <b>${signed(he.score_change[0])}</b> · ${TEAMS[1]} <b>${signed(he.score_change[1])}</b>; ` +
      `scores ${TEAMS[0]} ${num(he.scores[0])} · ${TEAMS[1]} ${num(he.scores[1])}.</p>`;
    show(box, true);
  } else show(box, false);
  const probs = $("probs");
  if (f.probabilities) {
    probs.innerHTML = `<b>${esc(R.players[f.actor])}</b>'s probabilities at this decision:` +
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
    const p = h.points || {}, d = h.hand_end ? h.hand_end.points : {};
    const cell = (k) => `<td>${h.points ? team(p[k]) : "–"}<span class="small">${k === "game" || !d[k] ? "" : pointText(d[k])}</span></td>`;
    html += `<tr data-hand="${h.hand}"><td>${h.hand + 1}</td><td>${h.dealer + 1}</td>` +
      (h.thrown_in ? `<td colspan="9">all passed: thrown in</td>` :
        `<td>${h.bidder === null || h.bidder === undefined ? "–" : h.bidder + 1}</td><td>${t(h.contract)}${h.made_contract === false ? " (set)" : ""}</td><td>${h.trump ? SUITS[h.trump] : "–"}</td>` +
        ["high", "low", "jack", "game"].map(cell).join("") +
        `<td>${h.score_change ? `${TEAMS[0]} ${signed(h.score_change[0])} · ${TEAMS[1]} ${signed(h.score_change[1])}` : "–"}</td>` +
        `<td>${h.scores ? `${num(h.scores[0])} – ${num(h.scores[1])}` : h.incomplete ? "(unfinished)" : "–"}</td>`) + "</tr>";
  }
  html += `<tr><td colspan="11">Final: ${TEAMS[0]} ${num(R.final_scores[0])} – ${TEAMS[1]} ${num(R.final_scores[1])}; ` +
    `${R.winner === null ? "no winner" : `${team(R.winner)} wins`}. ` +
    `Players: ${R.players.map((p, s) => `seat ${s + 1} ${esc(p)} (${TEAMS[s % 2]})`).join(", ")}` +
    (R.probabilities_for.length ? `; probabilities shown for ${[...new Set(R.probabilities_for)].map(esc).join(", ")}` : "") + "</td></tr>";
  $("scores").innerHTML = html;
}

const gid = new URLSearchParams(location.search).get("game");
if (gid) open(0);

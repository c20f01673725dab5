// The web table: one seat (or a spectator) of a game; everything shown comes from what the server sends
// for this link (the seat's view and the public log of the game).
"use strict";
const params = new URLSearchParams(location.search);
const DELAY = params.has("speed") ? Number(params.get("speed")) : 350;   // ms between agent moves
const POLL = params.has("poll") ? Number(params.get("poll")) : 1000;     // ms between checks for others' moves
const REL = ["you", "left", "partner", "right"];
const RULE_LABELS = {
  target_score: ["Points to win", null],
  kitty_size: ["Kitty cards for the bidder", null],
  high_low: ["High and Low", { ace_seven: "ace and 7 of trump", in_play: "highest and lowest trump played" }],
  game_point_tie: ["Game point on a tie", { nobody: "nobody", bidder: "the bidder's team" }],
  all_pass: ["When all four pass", { redeal: "throw in and redeal", dealer_must_bid: "the dealer must bid" }],
  win_requires_bid: ["Win only on your own bid", null],
  cap_defenders: ["Defenders stop below the target", null],
};
let game = null;          // {id, seat, players, spectator}
let state = null;         // last answer of the server
let seq = 0;              // how much of the game's log this page has shown
let pending = [];         // trick cards shown while events play out
let busy = false;
let showingLast = false;
let typed = "";
let logHand = null;       // the hand whose events the log shows now

const $ = (id) => document.getElementById(id);
const mySeat = () => (game.seat === null ? 0 : game.seat);
const rel = (seat) => (seat - mySeat() + 4) % 4;
const cap = (t) => t[0].toUpperCase() + t.slice(1);
const seatName = (s) => {
  if (game.seat === null) return `Seat ${s + 1} (${esc(game.players[s])})`;
  return s === game.seat ? "You" : `${cap(REL[rel(s)])} (${esc(game.players[s])})`;
};
const teamName = (t) => (game.seat === null ? (t === 0 ? "Team A" : "Team B") : t === (game.seat & 1) ? "You+partner" : "Opponents");
const signed = (n) => (n > 0 ? `+${n}` : `${n}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------------ setup
async function setup() {
  const cfg = await api("GET", "/api/config");
  const box = $("rule-fields");
  for (const [name, o] of Object.entries(cfg.rules)) {
    const [text, words] = RULE_LABELS[name] || [name.replaceAll("_", " "), null];
    const label = document.createElement("label");
    label.textContent = text;
    let input;
    if (o.type === "bool") {
      input = document.createElement("select");
      input.add(new Option("no", "false")); input.add(new Option("yes", "true"));
      input.value = String(o.default);
    } else if (o.choices) {
      input = document.createElement("select");
      for (const c of o.choices) input.add(new Option(words && words[c] ? words[c] : String(c), String(c)));
      input.value = String(o.default);
    } else {
      input = document.createElement("input"); input.type = "number"; input.min = "1"; input.value = o.default;
    }
    input.name = "rule:" + name; input.dataset.type = o.type;
    input.onchange = refreshAgents;
    label.appendChild(input); box.appendChild(label);
  }
  fillAgents(cfg);
  $("deal").onclick = deal;
  $("hint").onclick = hint;
  $("last-trick").onclick = toggleLast;
  $("next").onclick = () => send("POST", `/api/games/${game.id}/next`);
  $("resign").onclick = () => { show($("confirm-end"), true); show($("resign"), false); };
  $("resign-no").onclick = () => { show($("confirm-end"), false); show($("resign"), true); };
  $("resign-yes").onclick = () => { show($("confirm-end"), false); send("POST", `/api/games/${game.id}/resign`); };
  $("leave").onclick = () => send("POST", `/api/games/${game.id}/leave`, {});
  $("new-game").onclick = () => { location.href = "/" + (params.has("speed") ? `?speed=${DELAY}` : ""); };
  document.addEventListener("keydown", onKey);
}

function rulesOfForm() {
  const rules = {};
  for (const input of $("setup-form").querySelectorAll("[name^='rule:']")) {
    const name = input.name.slice(5), t = input.dataset.type;
    rules[name] = t === "bool" ? input.value === "true" : t === "int" ? Number(input.value) : input.value;
  }
  return rules;
}

function fillAgents(opts) {
  // the agents that play the chosen rules are offered; the others are shown disabled with the reason
  for (const sel of document.querySelectorAll(".agent-select")) {
    const was = sel.value;
    sel.innerHTML = "";
    for (const a of opts.agents) {
      const o = new Option(a.name + (a.playable ? "" : " — not for these rules"), a.id);
      o.disabled = !a.playable; if (a.why) o.title = a.why;
      sel.add(o);
    }
    if (!opts.agents.some((a) => a.id === opts.default)) sel.add(new Option(opts.default, opts.default));
    sel.add(new Option("a friend (human)", "human"));
    const keep = [...sel.options].find((o) => o.value === was && !o.disabled);
    sel.value = keep ? was : opts.default;
  }
  const notes = opts.agents.filter((a) => !a.playable).map((a) => a.why);
  if (notes.length) notes.push(`the default for these rules is ${opts.default}`);
  $("agent-notes").textContent = notes.join(" · ");
  show($("agent-notes"), notes.length > 0);
}

async function refreshAgents() {
  try { fillAgents(await api("POST", "/api/agents", { rules: rulesOfForm() })); show($("setup-error"), false); }
  catch (e) { $("setup-error").textContent = e.message; show($("setup-error"), true); }
}

async function deal() {
  const f = $("setup-form");
  const seat = Number(f.seat.value);
  const body = { seat, rules: rulesOfForm(), humans: [seat], agents: {} };
  for (const sel of document.querySelectorAll(".agent-select")) {
    const s = (seat + Number(sel.dataset.rel)) % 4;
    if (sel.value === "human") body.humans.push(s); else body.agents[String(s)] = sel.value;
  }
  if (f.seed.value !== "") body.seed = Number(f.seed.value);
  show($("setup-error"), false);
  try {
    const s = await api("POST", "/api/games", body);
    start(s.game_id, s);
    if (body.humans.length > 1) showLinks(s.links);
    log(`New game: you sit in seat ${s.seat + 1}.`);
    await receive(s);
  } catch (e) {
    $("setup-error").textContent = e.message; show($("setup-error"), true);
  }
}

function start(id, s) {
  game = { id, seat: s.seat, players: s.players, spectator: s.spectator };
  history.replaceState(null, "", `?game=${id}` + (params.has("speed") ? `&speed=${DELAY}` : ""));
  show($("game-layout"), true); show($("setup"), false);
  $("log").innerHTML = ""; pending = []; seq = 0; drawTrick([], null);
  setInterval(poll, POLL);
}

function showLinks(links) {
  const rows = Object.entries(links.seats).filter(([s]) => Number(s) !== game.seat).map(([s, l]) =>
    `<div>Seat ${Number(s) + 1} (${esc(REL[rel(Number(s))])}): <input readonly class="link" data-seat="${s}" value="${esc(location.origin + l)}"></div>`);
  rows.push(`<div>Spectators: <input readonly class="link" data-seat="spectator" value="${esc(location.origin + links.spectator)}"></div>`);
  $("links").innerHTML = "<b>Send each friend their own link</b> (a link shows only its seat's cards):" + rows.join("");
  show($("links"), true);
}

// ------------------------------------------------------------------------------------------------ talking to the server
async function send(method, path, body) {
  if (busy) return;
  busy = true;
  show($("error"), false); show($("hints"), false);
  try {
    await receive(await api(method, path + (path.includes("?") ? "&" : "?") + `since=${seq}`, body));
  } catch (e) {
    $("error").textContent = e.message + (e.data && e.data.why ? "" : ""); show($("error"), true);
  } finally {
    busy = false;
  }
}

async function poll() {
  // other seats' moves (friends, or agents after a friend's move): the log since what this page has shown
  if (busy || !state || state.over || document.hidden) return;
  if (state.humans.length < 2 && !game.spectator) return;
  busy = true;
  try {
    const s = await api("GET", `/api/games/${game.id}?since=${seq}`);
    if (s.seq !== seq || s.view.to_act !== state.view.to_act || s.over !== state.over) await receive(s);
  } catch (e) { /* the next poll tries again */ } finally { busy = false; }
}

function log(text, cls) {
  const line = document.createElement("div");
  line.innerHTML = text;
  if (cls) line.className = cls;
  $("log").appendChild(line);
  $("log").scrollTop = $("log").scrollHeight;
}

async function receive(s, animate = true) {
  // Play the public events one by one (cards land on the felt), then show the view.
  for (const e of s.events) {
    if (e.hand !== logHand) { log(`<b>Hand ${e.hand}</b>`, "hand-head"); logHand = e.hand; }
    let text = `${seatName(e.seat)}: ${moveText(e.name)}`;
    if (e.name.startsWith("play ")) {
      if (pending.length === 4) pending = [];
      pending.push({ seat: e.seat, card: e.name.slice(5) });
      if (animate) drawTrick(pending, null);
    }
    if (e.trick_winner !== undefined) {
      text += `  → trick to ${seatName(e.trick_winner)}`;
      if (animate) drawTrick(pending, e.trick_winner);
      pending = [];
    }
    log(text);
    if (e.thrown_in) {
      log("Everybody passed: the hand is thrown in and the same dealer deals again.", "notice");
      $("notice").textContent = `Hand ${e.hand}: everybody passed — the cards were thrown in and the same dealer dealt a new hand.`;
      show($("notice"), true);
    }
    if (animate && DELAY && e.seat !== game.seat) await sleep(DELAY);
  }
  seq = s.seq;
  if (state && s.hand_number !== state.hand_number && !s.events.some((e) => e.thrown_in)) show($("notice"), false);
  state = s;
  game.players = s.players;
  render();
}

// ------------------------------------------------------------------------------------------------ drawing
function drawTrick(plays, winner, note) {
  for (const slot of document.querySelectorAll("#trick .slot")) slot.innerHTML = "";
  for (const p of plays) document.querySelector(`#trick .slot[data-rel="${rel(p.seat)}"]`).appendChild(cardEl(p.card));
  $("trick-note").textContent = note || (winner === null ? "" : `won by ${seatName(winner)}`);
}

function toggleLast() {
  if (!state || !state.table.last_trick) return;
  showingLast = !showingLast;
  render();
}

function render() {
  const v = state.view, me = game.seat === null ? 0 : v.team, t = state.table;
  const trump = v.trump ? SUITS[v.trump] : v.contract ? "not shown yet" : "–";
  $("info").innerHTML = `<span>Hand <b>${state.hand_number}</b></span>` +
    `<span>${teamName(me)} <b>${v.scores[me]}</b> · ${teamName(1 - me)} <b>${v.scores[1 - me]}</b> (to ${v.target_score})</span>` +
    `<span>Dealer: <b>${seatName(v.dealer)}</b></span>` +
    (v.contract ? `<span>Contract: <b>${v.contract}</b> by ${seatName(v.bidder)}</span>` : "") +
    `<span>Trump: <b>${trump}</b></span>` + (game.spectator ? "<span><b>Watching</b></span>" : "");
  const leader = t.leader;
  for (const el of document.querySelectorAll("#felt .seat")) {
    const s = (mySeat() + Number(el.dataset.rel)) % 4;
    const bid = v.bids[s] === null ? "" : v.bids[s] === "pass" ? "passed" : `bid ${v.bids[s]}`;
    el.classList.toggle("turn", v.to_act === s);
    el.innerHTML = `<div class="name">${seatName(s)}${v.to_act === s ? ' <span class="badge">to play</span>' : ""}</div>` +
      `<div class="meta">${[s === v.dealer ? "dealer" : "", bid, v.bidder === s ? "bidder" : "",
        leader === s && v.phase === "PLAY" ? `<span class="led">${v.trick.length ? "led this trick" : "leads"}</span>` : ""].filter(Boolean).join(" · ")}</div>`;
    if (s !== game.seat) {
      const backs = document.createElement("div"); backs.className = "backs";
      for (let i = 0; i < v.hand_sizes[s]; i++) { const b = document.createElement("span"); b.className = "back"; backs.appendChild(b); }
      el.appendChild(backs);
    }
  }
  $("tally").innerHTML = `Tricks: ${teamName(me)} <b>${t.tricks_won[me]}</b> · ${teamName(1 - me)} <b>${t.tricks_won[1 - me]}</b><br>` +
    `Card points taken: ${teamName(me)} <b>${t.card_points[me]}</b> · ${teamName(1 - me)} <b>${t.card_points[1 - me]}</b>`;
  if (showingLast && t.last_trick) {
    drawTrick(t.last_trick.plays, t.last_trick.winner, `last trick: won by ${seatName(t.last_trick.winner)}`);
    $("last-trick").textContent = "Back to the table";
  } else {
    showingLast = false;
    $("last-trick").textContent = "Last trick";
    if (v.trick.length) { pending = v.trick.map((x) => ({ seat: x.seat, card: x.card })); drawTrick(pending, null); }
    else if (v.phase !== "PLAY" || !t.last_trick) drawTrick([], null);
  }
  $("last-trick").disabled = !t.last_trick;
  // the hand: legal cards are clickable and numbered
  const legal = new Map(v.legal_actions.map((a) => [a.name, a.id]));
  const order = [];
  const hand = $("hand"); hand.innerHTML = "";
  for (const c of sortHand(v.hand, v.trump)) {
    const el = cardEl(c);
    if (v.trump && c[1] === v.trump) el.classList.add("trump");
    const id = legal.get(`play ${c}`) ?? legal.get(`discard ${c}`);
    if (id !== undefined && !state.over) {
      el.classList.add("legal");
      el.onclick = () => move(id);
      order.push(id);
      el.insertAdjacentHTML("beforeend", `<span class="key">${order.length}</span>`);
    }
    hand.appendChild(el);
  }
  // bids and trump are buttons (none once the game is over)
  const moves = $("moves"); moves.innerHTML = "";
  for (const a of state.over ? [] : v.legal_actions) {
    if (a.name.startsWith("play ") || a.name.startsWith("discard ")) continue;
    order.push(a.id);
    const b = document.createElement("button");
    b.innerHTML = `<span class="key">${order.length}</span> ${moveText(a.name)}`; b.dataset.action = a.id; b.className = "move";
    b.onclick = () => move(a.id);
    moves.appendChild(b);
  }
  game.order = order;
  $("mine").innerHTML = v.kitty.length ? `You took the kitty: ${v.kitty.map(cardText).join(" ")}` +
    (v.discards.length ? ` · your discards (count for your team's game points): <b>${v.discards.map(cardText).join(" ")}</b>` : "") : "";
  const prompt = $("prompt");
  const phaseText = { BIDDING: "Your bid", TRUMP: "Name trump", DISCARD: `Discard ${v.kitty_size - v.discards.length} more`, PLAY: "Your card" };
  if (v.legal_actions.length && !state.over) { prompt.textContent = phaseText[v.phase]; show(prompt, true); }
  else if (!state.over && v.to_act !== null && !game.spectator) { prompt.textContent = `Waiting for ${seatName(v.to_act)}…`; show(prompt, true); }
  else show(prompt, false);
  $("hint").disabled = !v.legal_actions.length || state.over;
  const over = state.over, handOver = v.phase === "HAND_OVER" && !over;
  show($("next"), handOver && !game.spectator);
  show($("resign"), !over && !game.spectator && $("confirm-end").classList.contains("hidden"));
  if (over) show($("confirm-end"), false);
  show($("leave"), !over && !game.spectator && state.humans.length > 1 && state.humans.includes(game.seat));
  show($("new-game"), over);
  handEnd();
  const res = $("result");
  if (over) {
    const text = state.error ? `Game stopped: ${state.error}` : state.truncated ? "The game stopped at the hand limit." :
      game.seat === null ? `${teamName(state.winner)} wins the game.` :
      state.winner === me ? "You win the game!" : "The opponents win the game.";
    res.innerHTML = `<b id="game-over">${esc(text)}</b>`;
    show(res, true);
    $("replay-link").href = `/replay?game=${game.id}`; show($("replay-link"), true);
    $("record-link").href = `/api/games/${game.id}/record`; show($("record-link"), true);
  } else show(res, false);
  if (state.left.includes(game.seat)) { $("notice").textContent = "You left: an agent plays your seat now."; show($("notice"), true); }
  if (state.error && !over) { $("error").textContent = state.error; show($("error"), true); }
}

function handEnd() {
  const he = state.hand_end, box = $("hand-end");
  if (!he) { show(box, false); return; }
  const me = game.seat === null ? 0 : game.seat & 1;
  const rows = ["high", "low", "jack", "game"].map((k) => {
    const p = he.points[k];
    let how;
    if (k === "game") how = `card points ${teamName(me)} ${p.card_points[me]} · ${teamName(1 - me)} ${p.card_points[1 - me]}`;
    else if (!p.card) how = "its card was not played";
    else how = `${cardHtml(p.card)} played by ${seatName(p.played_by)}` + (k === "jack" && p.won_by !== p.played_by ? `, won by ${seatName(p.won_by)}` : "");
    return `<tr><th>${cap(k)}</th><td>${p.team === null ? "nobody" : teamName(p.team)}</td><td>${how}</td></tr>`;
  });
  const made = he.made_contract ? `<span class="made">made</span>` : `<span class="set">went set</span>`;
  box.innerHTML = `<h3>Hand ${state.hand_number} is over</h3><table class="points">${rows.join("")}</table>` +
    `<p>${seatName(he.bidder)} bid ${he.contract} in ${SUITS[he.trump]} and ${made}${he.made_contract ? "" : ` on a bid of ${he.contract}`}.</p>` +
    `<p>Score change: ${teamName(me)} <b>${signed(he.score_change[me])}</b> · ${teamName(1 - me)} <b>${signed(he.score_change[1 - me])}</b>` +
    ` → ${teamName(me)} ${he.scores[me]}, ${teamName(1 - me)} ${he.scores[1 - me]}</p>`;
  show(box, true);
  box.scrollIntoView({ block: "nearest" });
}

function cardHtml(c) { return `<span class="${RED.has(c[1]) ? "red" : ""}"><b>${cardText(c)}</b></span>`; }

function move(id) { send("POST", `/api/games/${game.id}/actions`, { action: id }); }

async function hint() {
  try {
    const h = await api("GET", `/api/games/${game.id}/hint`);
    const pf = h.probability_from;
    const rows = h.moves.map((m) => `<tr data-action="${m.id}"><td>${moveText(m.name)}</td>` +
      (pf ? `<td>${m.p === null ? "–" : (100 * m.p).toFixed(0) + "%"}</td>` : "") +
      `<td>${m.value === null ? "–" : (m.value > 0 ? "+" : "") + m.value.toFixed(1)}</td>` +
      `<td class="small">${m.chosen_by.map(esc).join(", ")}</td></tr>`).join("");
    $("hints").innerHTML = `<h2>Hint</h2><table class="hint-table" id="hint-table"><tr><th>move</th>${pf ? `<th>${esc(pf)} plays it</th>` : ""}` +
      `<th title="${esc(h.value_note || "")}">worth</th><th>chosen by</th></tr>${rows}</table>` +
      `<p class="small">${esc(h.value_note || "")}</p>` + h.notes.map((n) => `<p class="small note">${esc(n)}</p>`).join("");
    show($("hints"), true);
  } catch (e) { $("error").textContent = e.message; show($("error"), true); }
}

// ------------------------------------------------------------------------------------------------ keyboard
function onKey(e) {
  if (!state || busy || e.ctrlKey || e.metaKey || e.altKey || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  const k = e.key;
  if (k === "Enter" && !$("next").classList.contains("hidden")) { $("next").click(); e.preventDefault(); return; }
  if (k === "?") { if (!$("hint").disabled) hint(); return; }
  if (k === "l" || k === "L") { toggleLast(); return; }
  const legal = state.view.legal_actions;
  if (!legal.length || state.over) return;
  if (/^[1-9]$/.test(k)) {
    const id = game.order[Number(k) - 1];
    if (id !== undefined) move(id);
    return;
  }
  if (k === "p" || k === "P") { const a = legal.find((x) => x.name === "pass"); if (a) move(a.id); return; }
  if (!/^[0-9a-zA-Z]$/.test(k)) return;
  typed = (typed + k.toUpperCase()).slice(-2);
  const m = typed.match(/([789TJQKA])([CDHS])$/);
  if (m) {
    typed = "";
    const a = legal.find((x) => x.name === `play ${m[1]}${m[2]}` || x.name === `discard ${m[1]}${m[2]}`);
    if (a) move(a.id);
    else { $("error").textContent = `${cardText(m[1] + m[2])} is not a legal move now`; show($("error"), true); }
  } else if (state.view.phase === "TRUMP" && /^[CDHS]$/.test(typed)) {
    const a = legal.find((x) => x.name === `trump ${typed}`);
    typed = "";
    if (a) move(a.id);
  }
}

async function resume(id) {
  try {
    const s = await api("GET", `/api/games/${id}?since=0`);   // the whole history of the game, from the server
    start(id, s);
    log(game.spectator ? "You are watching this game." : `You sit in seat ${s.seat + 1}.`);
    await receive(s, false);
  } catch (e) { $("setup-error").textContent = e.message; show($("setup-error"), true); }
}

setup().then(() => { if (params.get("game")) resume(params.get("game")); });

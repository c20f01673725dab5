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
  cap_defenders: ["Defenders' score capped at the target", null],
};
const AGENT_WORDS = { default: "trained bot", heuristic: "rule-based bot", random: "random bot", pimc: "search bot" };
const TYPE_MS = 2500;     // a typed card name is forgotten after this long without a key
let game = null;          // {id, seat, orient, players, spectator, links}
let state = null;         // last answer of the server
let seq = 0;              // how much of the game's log this page has shown
let chatN = 0;            // the next chat message number this page has not shown
let pending = [];         // trick cards shown while events play out
let busy = false;          // a move is being sent or a poll is answered (the tests wait on it)
let sending = false, polling = false;
let keyQueue = [];        // keys typed while a move is on its way: read once it is answered
let showingLast = false;
let typed = "", typedAt = 0;
let logHand = null;       // the hand whose events the log shows now
let chosen = [];          // discards picked, not yet confirmed
let endPanel = null;      // {hand, html}: the hand-end panel this page shows until its person closes it
let joinAsked = false;

const $ = (id) => document.getElementById(id);
const mySeat = () => (game.seat === null ? game.orient : game.seat);
const rel = (seat) => (seat - mySeat() + 4) % 4;
const cap = (t) => t[0].toUpperCase() + t.slice(1);
const agentWords = (name) => AGENT_WORDS[name] || `${name} (bot)`;
const isHuman = (s) => state && state.humans.includes(s);
function playerOf(s) {
  // who sits at seat s, in words: a person's chosen name, or what kind of agent
  if (isHuman(s)) return (state.named && state.named[s]) || "a friend";
  return agentWords(game.players[s]);
}
const seatName = (s) => {
  if (game.seat === null) return `Seat ${s + 1} · ${esc(playerOf(s))}`;
  return s === game.seat ? "You" : `${cap(REL[rel(s)])} · ${esc(playerOf(s))}`;
};
const myTeam = () => (game.seat === null ? 0 : game.seat & 1);
const teamName = (t) => (game.seat === null ? (t === 0 ? "Team A (seats 1, 3)" : "Team B (seats 2, 4)") : t === myTeam() ? "You+partner" : "Opponents");
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0");
const num = (n) => (n < 0 ? `−${-n}` : `${n}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const multi = () => state && (state.humans.length + state.left.length > 1);

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
  const saved = localStorage.getItem("smear-name");
  if (saved) { $("setup-form").name.value = saved; $("join-name").value = saved; }
  $("deal").onclick = deal;
  $("hint").onclick = hint;
  $("last-trick").onclick = toggleLast;
  $("next").onclick = nextHand;
  $("resign").onclick = () => {
    const others = state.humans.filter((s) => s !== game.seat && !state.end_votes.includes(s));
    $("confirm-text").textContent = others.length ? `Ask ${others.map(playerOf).join(" and ")} to end the game?` : "End the game now?";
    $("resign-yes").textContent = others.length ? "Yes, ask" : "Yes, end it";
    show($("confirm-end"), true); show($("resign"), false);
  };
  $("resign-no").onclick = () => { show($("confirm-end"), false); show($("resign"), true); };
  $("resign-yes").onclick = () => { show($("confirm-end"), false); send("POST", `/api/games/${game.id}/resign`, { agree: true }); };
  $("leave").onclick = () => { show($("confirm-leave"), true); show($("leave"), false); };
  $("leave-no").onclick = () => { show($("confirm-leave"), false); render(); };
  $("leave-yes").onclick = () => { show($("confirm-leave"), false); send("POST", `/api/games/${game.id}/leave`, {}); };
  $("show-links").onclick = () => { $("links").open = true; show($("links"), true); $("links").scrollIntoView({ block: "nearest" }); };
  $("new-game").onclick = () => { location.href = "/" + (params.has("speed") ? `?speed=${DELAY}` : ""); };
  $("join-ok").onclick = () => join($("join-name").value);
  $("join-skip").onclick = () => show($("join"), false);
  $("join-name").onkeydown = (e) => { if (e.key === "Enter") join($("join-name").value); };
  $("chat-form").onsubmit = (e) => { e.preventDefault(); say(); };
  document.addEventListener("keydown", onKey);
  matchMedia("(max-width: 900px)").addEventListener("change", placeHints);
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
      const o = new Option(agentWords(a.name) + (a.name === opts.default ? " (the default)" : "") +
        (a.playable ? "" : " — not for these rules"), a.id);
      o.disabled = !a.playable;
      if (a.why) o.title = a.why;
      sel.add(o);
    }
    sel.add(new Option("a friend (human)", "human"));
    const keep = [...sel.options].find((o) => o.value === was && !o.disabled);
    sel.value = keep ? was : opts.default;
  }
  const notes = opts.agents.filter((a) => !a.playable).map((a) => a.why);
  if (notes.length) notes.push(`the default for these rules is the ${agentWords(opts.default)}`);
  $("agent-notes").textContent = notes.join(" · ");
  show($("agent-notes"), notes.length > 0);
}

let agentsAsked = 0;  // only the answer to the latest question fills the form: replies may arrive out of order

async function refreshAgents() {
  const mine = ++agentsAsked;
  try {
    const opts = await api("POST", "/api/agents", { rules: rulesOfForm() });
    if (mine !== agentsAsked) return;
    fillAgents(opts); show($("setup-error"), false);
  } catch (e) {
    if (mine !== agentsAsked) return;
    $("setup-error").textContent = e.message; show($("setup-error"), true);
  }
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
  const name = f.name.value.trim();
  if (name) { body.names = { [String(seat)]: name }; localStorage.setItem("smear-name", name); }
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
  game = { id, seat: s.seat, orient: s.left_seat ?? 0, players: s.players, spectator: s.spectator };
  history.replaceState(null, "", `?game=${id}` + (params.has("speed") ? `&speed=${DELAY}` : ""));
  show($("game-layout"), true); show($("setup"), false);
  $("log").innerHTML = ""; $("chat").innerHTML = ""; pending = []; seq = 0; chatN = 0; drawTrick([], null);
  placeHints();
  setInterval(poll, POLL);
}

function showLinks(links) {
  game.links = links;
  const rows = Object.entries(links.seats).filter(([s]) => Number(s) !== game.seat).map(([s, l]) =>
    `<div class="link-row">Seat ${Number(s) + 1} (your ${esc(REL[rel(Number(s))])}): <input readonly class="link" data-seat="${s}" value="${esc(location.origin + l)}">` +
    `<button type="button" class="copy">Copy</button></div>`);
  rows.push(`<div class="link-row">Spectators: <input readonly class="link" data-seat="spectator" value="${esc(location.origin + links.spectator)}">` +
    `<button type="button" class="copy">Copy</button></div>`);
  $("link-rows").innerHTML = rows.join("") +
    '<p class="small">Each link is one seat: whoever opens it plays that seat (its cards only). As host you hold every link: send each to one friend.</p>';
  for (const b of $("link-rows").querySelectorAll("button.copy")) b.onclick = () => copy(b);
  $("links").open = true;
  show($("links"), true); show($("show-links"), true);
}

async function copy(button) {
  const input = button.previousElementSibling;
  try { await navigator.clipboard.writeText(input.value); }
  catch (e) { input.select(); document.execCommand("copy"); }
  button.textContent = "Copied ✓";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

// ------------------------------------------------------------------------------------------------ talking to the server
const query = () => `since=${seq}&chat=${chatN}`;

async function send(method, path, body) {
  // one request at a time from this page: a click while a poll is answered waits for it (never dropped)
  if (sending) return false;
  sending = busy = true;
  while (polling) await sleep(15);
  show($("error"), false); show($("hints"), false);
  try {
    await receive(await api(method, path + (path.includes("?") ? "&" : "?") + query(), body));
    return true;
  } catch (e) {
    $("error").textContent = e.message; show($("error"), true);
    return false;
  } finally {
    sending = busy = false;
    setTimeout(drainKeys, 0);
  }
}

async function poll() {
  // other seats' moves (friends, or agents after a friend's move), the chat, who asked to end
  if (sending || polling || !state || state.over || document.hidden) return;
  if (!multi() && !game.spectator) return;
  polling = busy = true;
  try {
    const s = await api("GET", `/api/games/${game.id}?${query()}`);
    const key = (x) => JSON.stringify([x.seq, x.view.to_act, x.over, x.end_votes, x.chat_count, x.named, x.humans]);
    if (key(s) !== key(state) && !sending) await receive(s);
  } catch (e) { /* the next poll tries again */ } finally { polling = false; busy = sending; }
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
  if (state && state.hand_end) keepEnd(state);   // the hand this page shows: kept until its person closes it
  for (const e of s.events) {
    if (e.hand !== logHand) { log(`<b>Hand ${e.hand}</b>`, "hand-head"); logHand = e.hand; }
    let text = `${seatName(e.seat)}: ${moveText(e.name)}`;
    if (e.name.startsWith("play ")) {
      if (pending.length === 4) pending = [];
      pending.push({ seat: e.seat, card: e.name.slice(5) });
      if (animate) drawTrick(pending, null, null, e.seat);
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
  for (const m of s.chat || []) {
    if (m.n < chatN) continue;
    const line = document.createElement("div");
    line.innerHTML = `<b>${esc(m.name)}</b>: ${esc(m.text)}`;   // text only, never markup
    $("chat").appendChild(line);
    chatN = m.n + 1;
  }
  $("chat").scrollTop = $("chat").scrollHeight;
  seq = s.seq;
  if (state && s.hand_number !== state.hand_number && !s.events.some((e) => e.thrown_in)) show($("notice"), false);
  if (s.left_seat !== null && s.left_seat !== undefined && game.seat !== null) {   // this person left: watch
    game.orient = s.left_seat; game.seat = null; game.spectator = true;
  }
  if (state && state.view.phase !== s.view.phase) chosen = [];
  state = s;
  game.players = s.players;
  render();
}

// ------------------------------------------------------------------------------------------------ drawing
function drawTrick(plays, winner, note, newSeat) {
  for (const slot of document.querySelectorAll("#trick .slot")) slot.innerHTML = "";
  plays.forEach((p, i) => {
    const from = p.seat === newSeat ? ["bottom", "left", "top", "right"][rel(p.seat)] : null;
    document.querySelector(`#trick .slot[data-rel="${rel(p.seat)}"]`).appendChild(trickCard(p, i, winner, from));
  });
  const led = plays.length ? `${seatName(plays[0].seat)} led` : "";
  $("trick-note").innerHTML = note || (winner === null || winner === undefined ? led : `${led} · won by <b>${seatName(winner)}</b>`);
}

function toggleLast() {
  if (!state || !state.table.last_trick) return;
  showingLast = !showingLast;
  render();
}

function ruleNote(n) { return esc(n.text.replace("{team}", n.team === null ? "" : teamName(n.team))); }

function render() {
  const v = state.view, me = myTeam(), t = state.table;
  const trump = v.trump ? SUITS[v.trump] : v.contract ? "not shown yet" : "–";
  $("info").innerHTML = `<span>Hand <b>${state.hand_number}</b></span>` +
    `<span>${teamName(me)} <b>${num(v.scores[me])}</b> · ${teamName(1 - me)} <b>${num(v.scores[1 - me])}</b> (${v.target_score} to win)</span>` +
    `<span>Dealer: <b>${seatName(v.dealer)}</b></span>` +
    (v.contract ? `<span>Contract: <b>${v.contract}</b> by ${seatName(v.bidder)}</span>` : "") +
    `<span>Trump: <b>${trump}</b></span>` + (game.spectator ? "<span><b>Watching</b></span>" : "");
  const leader = t.leader;
  for (const el of document.querySelectorAll("#felt .seat")) {
    const s = (mySeat() + Number(el.dataset.rel)) % 4;
    const bid = v.bids[s] === null ? "" : v.bids[s] === "pass" ? "passed" : `bid ${v.bids[s]}`;
    const turn = v.to_act === s && !state.over;
    el.classList.toggle("turn", turn);
    el.innerHTML = `<div class="name">${seatName(s)}${turn ? ' <span class="badge">to play</span>' : ""}</div>` +
      `<div class="meta">${[s === v.dealer ? "dealer" : "", bid, v.bidder === s ? "bidder" : "",
        leader === s && v.phase === "PLAY" ? `<span class="led">${v.trick.length ? "led this trick" : "leads"}</span>` : ""].filter(Boolean).join(" · ")}</div>`;
    if (s !== game.seat) {
      const backs = document.createElement("div"); backs.className = "backs";
      backs.title = `${v.hand_sizes[s]} cards`;
      for (let i = 0; i < v.hand_sizes[s]; i++) { const b = document.createElement("span"); b.className = "back"; backs.appendChild(b); }
      el.appendChild(backs);
    }
  }
  $("tally").innerHTML = `Tricks: ${teamName(me)} <b>${t.tricks_won[me]}</b> · ${teamName(1 - me)} <b>${t.tricks_won[1 - me]}</b> · ` +
    `card points in tricks: ${teamName(me)} <b>${t.card_points[me]}</b> · ${teamName(1 - me)} <b>${t.card_points[1 - me]}</b>`;
  if (showingLast && t.last_trick) {
    const lt = t.last_trick;
    drawTrick(lt.plays, lt.winner, `Last trick: ${seatName(lt.plays[0].seat)} led · won by <b>${seatName(lt.winner)}</b>`);
    $("last-trick").textContent = "Back to the table";
  } else {
    showingLast = false;
    $("last-trick").textContent = "Last trick";
    if (v.trick.length) { pending = v.trick.map((x) => ({ seat: x.seat, card: x.card })); drawTrick(pending, null); }
    else if (v.phase !== "PLAY" || !t.last_trick) drawTrick([], null);
    else drawTrick(t.last_trick.plays, t.last_trick.winner);
  }
  $("last-trick").disabled = !t.last_trick;
  renderHand(v);
  // bids and trump are buttons (none once the game is over); the key that picks each is on it
  const moves = $("moves"); moves.innerHTML = "";
  for (const a of state.over ? [] : v.legal_actions) {
    if (a.name.startsWith("play ") || a.name.startsWith("discard ")) continue;
    const b = document.createElement("button");
    const key = a.name === "pass" ? "p" : a.name.startsWith("bid ") ? a.name.slice(4) : a.name.slice(6).toLowerCase();
    b.innerHTML = `<span class="key">${key}</span> ${moveText(a.name)}`; b.dataset.action = a.id; b.className = "move";
    b.onclick = () => move(a.id);
    moves.appendChild(b);
  }
  if (v.phase === "DISCARD" && v.legal_actions.length && !state.over) discardBar(v);
  $("mine").innerHTML = v.kitty.length ? `You took the kitty: ${v.kitty.map(cardText).join(" ")}` +
    (v.discards.length ? ` · your discards (they count for your team's Game point): <b>${v.discards.map(cardText).join(" ")}</b>` : "") : "";
  const prompt = $("prompt");
  const need = v.kitty_size - v.discards.length;
  const phaseText = { BIDDING: "Your bid", TRUMP: "Name trump (it stays hidden until your first lead, which must be a trump)",
    DISCARD: `Pick ${need} card${need > 1 ? "s" : ""} to discard, then confirm`, PLAY: "Your card" };
  if (v.legal_actions.length && !state.over) { prompt.textContent = phaseText[v.phase]; show(prompt, true); }
  else if (!state.over && v.to_act !== null && !game.spectator) { prompt.innerHTML = `Waiting for ${seatName(v.to_act)}…`; show(prompt, true); }
  else show(prompt, false);
  prompt.classList.toggle("yours", v.legal_actions.length > 0 && !state.over);
  const notes = state.rule_notes || [];
  $("rule-notes").innerHTML = notes.map((n) => `<div>${ruleNote(n)}</div>`).join("");
  show($("rule-notes"), notes.length > 0);
  $("hint").disabled = !v.legal_actions.length || state.over;
  const over = state.over, handOver = v.phase === "HAND_OVER" && !over;
  show($("resign"), !over && !game.spectator && $("confirm-end").classList.contains("hidden"));
  if (over || game.spectator) show($("confirm-end"), false);
  const canLeave = !over && !game.spectator && state.humans.length > 1 && state.humans.includes(game.seat);
  if (!canLeave) show($("confirm-leave"), false);
  show($("leave"), canLeave && $("confirm-leave").classList.contains("hidden"));
  show($("new-game"), over);
  show($("hint"), !game.spectator); show($("show-links"), !!game.links && !over); show($("keys"), !game.spectator && !over);
  show($("chat-panel"), multi() && (!game.spectator || state.chat_count > 0));
  show($("chat-form"), !game.spectator && !over);
  if (state.hand_number > 1 && game.links && !game.linksFolded) { $("links").open = false; game.linksFolded = true; }
  handEnd(handOver);
  endRequest();
  result(me);
  if (state.left_seat !== null && state.left_seat !== undefined) {
    $("notice").textContent = `You left seat ${state.left_seat + 1}: an agent plays it now, and this page watches the game.`;
    show($("notice"), true);
  }
  if (state.error && !over) { $("error").textContent = state.error; show($("error"), true); }
  if (!game.spectator && multi() && state.named && !state.named[game.seat] && !joinAsked && !over) {
    joinAsked = true; show($("join"), true);
  }
}

function renderHand(v) {
  // the hand: legal cards are clickable; the others are greyed with the rule that forbids them (hover or tap)
  const legal = new Map(v.legal_actions.map((a) => [a.name, a.id]));
  const why = state.unplayable || {};
  const hand = $("hand"); hand.innerHTML = "";
  const discarding = v.phase === "DISCARD" && v.legal_actions.length > 0;
  for (const c of sortHand(v.hand, v.trump)) {
    const el = cardEl(c);
    if (v.trump && c[1] === v.trump) { el.classList.add("trump"); el.title = "trump"; }
    const id = legal.get(`play ${c}`) ?? legal.get(`discard ${c}`);
    if (state.over) { /* nothing to play */ }
    else if (id !== undefined) {
      el.classList.add("legal");
      if (discarding) {
        el.onclick = () => toggleDiscard(c);
        if (chosen.includes(c)) { el.classList.add("chosen"); el.insertAdjacentHTML("beforeend", '<span class="key">✓</span>'); }
      } else el.onclick = () => move(id);
    } else if (why[c]) {
      el.classList.add("unplayable");
      el.title = why[c];
      el.onclick = () => { $("error").textContent = `${cardText(c)} cannot be ${discarding ? "discarded" : "played"} now: ${why[c]}`; show($("error"), true); };
    }
    hand.appendChild(el);
  }
}

function discardBar(v) {
  const need = v.kitty_size - v.discards.length;
  const bar = document.createElement("span"); bar.className = "discard-bar";
  bar.innerHTML = chosen.length ? `To discard: <b>${chosen.map(cardText).join(" ")}</b> ` : `Pick ${need} card${need > 1 ? "s" : ""} `;
  const ok = document.createElement("button");
  ok.id = "discard-ok"; ok.className = "primary"; ok.type = "button";
  ok.textContent = chosen.length === need ? `Discard ${chosen.length === 1 ? "it" : `these ${need}`} (Enter)` : `${chosen.length} of ${need} picked`;
  ok.disabled = chosen.length !== need;
  ok.onclick = confirmDiscards;
  const undo = document.createElement("button");
  undo.id = "discard-undo"; undo.type = "button"; undo.textContent = "Undo"; undo.disabled = !chosen.length;
  undo.onclick = () => { chosen.pop(); render(); };
  bar.append(ok, " ", undo);
  $("moves").appendChild(bar);
}

function toggleDiscard(c) {
  const need = state.view.kitty_size - state.view.discards.length;
  if (chosen.includes(c)) chosen = chosen.filter((x) => x !== c);
  else if (chosen.length < need) chosen.push(c);
  else { $("error").textContent = `You discard ${need}: take one back first (click it, or Undo)`; show($("error"), true); return; }
  show($("error"), false);
  render();
}

async function confirmDiscards() {
  const picks = [...chosen];
  for (const c of picks) {
    const a = state.view.legal_actions.find((x) => x.name === `discard ${c}`);
    if (!a || !(await send("POST", `/api/games/${game.id}/actions`, { action: a.id }))) break;
  }
  chosen = [];
  render();
}

function keepEnd(s) {
  // a new hand end opens the panel; the same one keeps its open/closed state
  if (endPanel && endPanel.hand === s.hand_number) endPanel.html = endHtml(s);
  else endPanel = { hand: s.hand_number, html: endHtml(s), closed: false };
}

function handEnd(handOver) {
  // the end-of-hand panel stays on this page until its person closes it (another person may deal meanwhile)
  const box = $("hand-end");
  if (state.hand_end) keepEnd(state);
  const open = endPanel && !endPanel.closed;
  if (!open) { show(box, false); show($("next"), false); return; }
  const dealt = !state.hand_end;
  box.innerHTML = endPanel.html + (dealt ? `<p class="small">The next hand has been dealt: close this to play on.</p>` : "");
  show(box, true);
  $("next").textContent = dealt || game.spectator ? "Close" : "Next hand";
  show($("next"), (handOver || dealt || game.spectator) && !state.over);
  box.scrollIntoView({ block: "nearest" });
}

function nextHand() {
  if (state.view.phase === "HAND_OVER" && !state.over && !game.spectator) {
    endPanel.closed = true;
    send("POST", `/api/games/${game.id}/next`);
  } else { if (endPanel) endPanel.closed = true; render(); }
}

function endHtml(s) {
  const he = s.hand_end, me = myTeam();
  const rows = ["high", "low", "jack", "game"].map((k) => {
    const p = he.points[k];
    let how;
    if (k === "game") {
      const b = he.bidder & 1, d = p.discard_points;
      how = `card points ${teamName(me)} ${p.card_points[me]} · ${teamName(1 - me)} ${p.card_points[1 - me]}` +
        (d ? ` <span class="small">(${teamName(b)}: ${d} of them from the bidder's discards; the felt counts tricks only)</span>` : "");
    } else if (!p.card) how = "its card was not played";
    else how = `${cardHtml(p.card)} played by ${seatName(p.played_by)}` + (k === "jack" && p.won_by !== p.played_by ? `, won by ${seatName(p.won_by)}` : "");
    return `<tr><th>${cap(k)}</th><td>${p.team === null ? "nobody" : teamName(p.team)}</td><td>${how}</td></tr>`;
  });
  const made = he.made_contract ? `<span class="made">made</span>` : `<span class="set">went set</span>`;
  const mine = game.seat !== null && (he.score_change[me] > he.score_change[1 - me]);
  return `<h3 class="${game.seat === null ? "" : mine ? "good-text" : "bad-text"}">Hand ${s.hand_number} is over</h3><table class="points">${rows.join("")}</table>` +
    `<p>${seatName(he.bidder)} bid ${he.contract} in ${SUITS[he.trump]} and ${made}${he.made_contract ? "" : ` on a bid of ${he.contract}`}.</p>` +
    `<p>Score change: ${teamName(me)} <b>${signed(he.score_change[me])}</b> · ${teamName(1 - me)} <b>${signed(he.score_change[1 - me])}</b>` +
    ` → ${teamName(me)} ${num(he.scores[me])}, ${teamName(1 - me)} ${num(he.scores[1 - me])}</p>` +
    (s.rule_notes || []).filter((n) => n.rule === "R20").map((n) => `<p class="note">${ruleNote(n)}</p>`).join("");
}

function endRequest() {
  // someone asked to end the game: the others are asked to agree
  const box = $("end-request"), votes = state.end_votes || [];
  if (state.over || !votes.length) { show(box, false); return; }
  const askers = votes.map((s) => (s === game.seat ? "You" : esc(playerOf(s)))).join(" and ");
  const waiting = state.humans.filter((s) => !votes.includes(s));
  let html = `${askers} asked to end the game; it ends when everyone seated agrees (waiting for ${waiting.map((s) => (s === game.seat ? "you" : esc(playerOf(s)))).join(", ")}).`;
  if (!game.spectator && !votes.includes(game.seat)) html += ' <button type="button" id="agree-end" class="danger">End it</button>';
  if (!game.spectator) html += ' <button type="button" id="keep-playing">Keep playing</button>';
  box.innerHTML = html;
  show(box, true);
  if ($("agree-end")) $("agree-end").onclick = () => send("POST", `/api/games/${game.id}/resign`, { agree: true });
  if ($("keep-playing")) $("keep-playing").onclick = () => send("POST", `/api/games/${game.id}/resign`, { agree: false });
}

function result(me) {
  const res = $("result");
  if (!state.over) { show(res, false); return; }
  let text, cls = "";
  if (state.ended) text = `Game over: ${state.ended}.`;
  else if (state.error) text = `Game stopped: ${state.error}`;
  else if (state.truncated) text = "The game stopped at the hand limit.";
  else if (game.seat === null) text = `${teamName(state.winner)} wins the game.`;
  else { const won = state.winner === me; text = won ? "You win the game!" : "The opponents win the game."; cls = won ? "good" : "bad"; }
  const v = state.view;
  res.className = "message " + cls;
  res.innerHTML = `<b id="game-over">${esc(text)}</b> Final score: ${teamName(me)} ${num(v.scores[me])} · ${teamName(1 - me)} ${num(v.scores[1 - me])}.`;
  show(res, true);
  $("replay-link").href = `/replay?game=${game.id}`; show($("replay-link"), true);
  $("record-link").href = `/api/games/${game.id}/record`; show($("record-link"), true);
}

function cardHtml(c) { return `<span class="${RED.has(c[1]) ? "red" : ""}"><b>${cardText(c)}</b></span>`; }

function move(id) { return send("POST", `/api/games/${game.id}/actions`, { action: id }); }

async function join(name) {
  name = name.trim();
  if (!name) { show($("join"), false); return; }
  localStorage.setItem("smear-name", name);
  if (await send("POST", `/api/games/${game.id}/name`, { name })) show($("join"), false);
}

async function say() {
  const text = $("chat-text").value.trim();
  if (!text) return;
  if (await send("POST", `/api/games/${game.id}/chat`, { text })) $("chat-text").value = "";
}

// ------------------------------------------------------------------------------------------------ hints
function placeHints() {
  // on a narrow screen the hint table sits right under the hand; on a wide one, beside the table
  const narrow = matchMedia("(max-width: 900px)").matches;
  const box = $("hints");
  if (narrow && box.parentElement !== $("hints-narrow")) $("hints-narrow").appendChild(box);
  if (!narrow && box.parentElement !== $("side")) $("side").prepend(box);
}

async function hint() {
  try {
    const h = await api("GET", `/api/games/${game.id}/hint`);
    const pf = h.probability_from;
    // sorted by the value shown (one decimal); equal shown values are ties and share a rank ("=2")
    const shown = (m) => (m.value === null ? null : Math.round(m.value * 10) / 10);
    const moves = [...h.moves].sort((a, b) => ((shown(b) ?? -1e9) - (shown(a) ?? -1e9)) || ((b.p ?? 0) - (a.p ?? 0)) || (a.id - b.id));
    const rows = moves.map((m) => {
      const w = shown(m);
      const better = moves.filter((x) => (shown(x) ?? -1e9) > (w ?? -1e9)).length;
      const tied = moves.filter((x) => shown(x) === w).length > 1;
      const rank = (tied ? "=" : "") + (better + 1);
      const picks = m.chosen_by.map((a) => `<span class="pick">★ ${esc(agentWords(a))}</span>`).join(" ");
      const extra = m.with && m.with.length ? `<br><span class="small">with ${m.with.map(cardText).join(" ")}</span>` : "";
      return `<tr data-action="${m.id}" class="${better === 0 ? "best" : ""}"><td>${rank}</td><td>${moveText(m.name)}${extra}</td>` +
        `<td>${w === null ? "–" : (w > 0 ? "+" : w < 0 ? "−" : "") + Math.abs(w).toFixed(1)}</td>` +
        (pf ? `<td>${m.p === null ? "–" : (100 * m.p).toFixed(0) + "%"}</td>` : "") + `<td>${picks}</td></tr>`;
    }).join("");
    const discard = moves.some((m) => m.with);
    $("hints").innerHTML = `<h2>Hint</h2><table class="hint-table" id="hint-table"><tr><th>#</th><th>move</th>` +
      `<th title="${esc(h.value_note || "")}">worth</th>${pf ? `<th title="how often the ${esc(agentWords(pf))} makes this move">${esc(agentWords(pf))} plays it</th>` : ""}` +
      `<th>bots' pick</th></tr>${rows}</table>` +
      `<p class="small" id="worth-line" title="${esc(h.value_note || "")}">Worth: your team's expected points minus the opponents' this hand after this move, as if all cards were face up (a guide; = is a tie).` +
      (discard ? " Each discard is valued together with the cards shown after it (the usual rest of the discards), so one card often changes nothing." : "") + "</p>" +
      h.notes.map((n) => `<p class="small note">${esc(n)}</p>`).join("");
    show($("hints"), true);
    $("hints").scrollIntoView({ block: "nearest" });
  } catch (e) { $("error").textContent = e.message; show($("error"), true); }
}

// ------------------------------------------------------------------------------------------------ keyboard
function typedError(text) { $("error").textContent = text; show($("error"), true); }

function onKey(e) {
  if (!state || e.ctrlKey || e.metaKey || e.altKey) return;
  const tag = e.target.tagName;
  if (["INPUT", "SELECT", "TEXTAREA"].includes(tag)) return;
  if (tag === "BUTTON" && e.key === " ") return;   // the button itself answers
  if (e.key === "Enter" && (sending || !$("next").classList.contains("hidden") || $("discard-ok"))) e.preventDefault();
  keyQueue.push(e.key);
  drainKeys();
}

function drainKeys() {
  while (keyQueue.length && !sending && state) onKeyName(keyQueue.shift());
}

function onKeyName(k) {
  const v = state.view;
  if (k === "Escape") { typed = ""; chosen = []; show($("error"), false); render(); return; }
  if (k === "Enter") {   // confirm the discards, or the next hand; else a focused button answers
    if (v.phase === "DISCARD" && v.legal_actions.length && chosen.length === v.kitty_size - v.discards.length) confirmDiscards();
    else if (!$("next").classList.contains("hidden")) $("next").click();
    return;
  }
  if (k === "?") { if (!$("hint").disabled) hint(); return; }
  if (k === "l" || k === "L") { toggleLast(); return; }
  const legal = v.legal_actions;
  if (!legal.length || state.over) return;
  const ch = k.length === 1 ? k.toUpperCase() : "";
  if (v.phase === "BIDDING") {
    // the digit is the bid itself; p passes
    if (/^[0-9]$/.test(ch)) {
      const a = legal.find((x) => x.name === `bid ${ch}`);
      if (a) move(a.id); else typedError(`bid ${ch} is not a bid you can make now: ${legal.map((x) => x.name).join(", ")}`);
    } else if (ch === "P") {
      const a = legal.find((x) => x.name === "pass");
      if (a) move(a.id); else typedError("you may not pass: " + ((state.rule_notes || []).map((n) => n.text).join(" ") || "bid"));
    }
    return;
  }
  if (v.phase === "TRUMP") {
    if (/^[CDHS]$/.test(ch)) {
      const a = legal.find((x) => x.name === `trump ${ch}`);
      if (a) move(a.id); else typedError(`trump must be a suit you hold (R10): ${legal.map((x) => moveText(x.name)).join(", ")}`);
    }
    return;
  }
  // the play and the discard: a card by its name, e.g. 10d (or td), 9c, qh; never a move number
  if (!/^[0-9A-Z]$/.test(ch)) return;
  const now = Date.now();
  if (now - typedAt > TYPE_MS) typed = "";
  typedAt = now;
  typed += ch;
  const name = typed.replace(/^10/, "T");
  if (/^(1|10|[789TJQKA])$/.test(typed) || /^[789TJQKA]$/.test(name)) { showTyped(); return; }
  typed = "";
  showTyped();
  const m = name.match(/^([789TJQKA])([CDHS])$/);
  if (!m) { typedError(`"${name.replace(/^T/, "10")}" is not a card: type a rank (7 8 9 10 J Q K A, or T for 10) then a suit (c d h s), e.g. 10d`); return; }
  const card = m[1] + m[2];
  if (!v.hand.includes(card)) { typedError(`you do not hold ${cardText(card)}`); return; }
  const a = legal.find((x) => x.name === `play ${card}` || x.name === `discard ${card}`);
  if (!a) { typedError(`${cardText(card)} cannot be ${v.phase === "DISCARD" ? "discarded" : "played"} now: ${(state.unplayable || {})[card] || "not a legal move"}`); return; }
  show($("error"), false);
  if (v.phase === "DISCARD") toggleDiscard(card); else move(a.id);
}

function showTyped() {
  const k = $("keys");
  k.dataset.typed = typed ? `typed: ${typed}…` : "";
  k.classList.toggle("typing", !!typed);
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

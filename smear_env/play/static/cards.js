// Shared by the table and the replay viewer: card elements, names, API calls.
"use strict";
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED = new Set(["D", "H"]);
const RANKS = "789TJQKA";

function cardEl(name, opts = {}) {
  const el = document.createElement("span");
  const rank = name[0] === "T" ? "10" : name[0];
  el.className = "card" + (RED.has(name[1]) ? " red" : "") + (opts.small ? " small" : "");
  el.dataset.card = name;
  el.innerHTML = `<span>${rank}${SUITS[name[1]]}</span><span class="pip">${SUITS[name[1]]}</span>`;
  return el;
}

function sortHand(cards, trump) {
  const order = (c) => [c[1] === trump ? 0 : 1, "CDHS".indexOf(c[1]), -RANKS.indexOf(c[0])];
  return [...cards].sort((a, b) => {
    const x = order(a), y = order(b);
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
  });
}

function trickCard(p, i, winner, animateFrom) {
  // one card of a trick on the felt: the leader's card (the first played) and the winning card are marked
  const el = cardEl(p.card);
  const tags = [];
  if (i === 0) { el.classList.add("lead"); tags.push("led"); }
  if (winner !== null && winner !== undefined && p.seat === winner) { el.classList.add("win"); tags.push("won"); }
  if (tags.length) el.insertAdjacentHTML("beforeend", `<span class="tag">${tags.join(" · ")}</span>`);
  if (animateFrom) el.classList.add("from-" + animateFrom);
  return el;
}

function cardText(c) { return (c[0] === "T" ? "10" : c[0]) + SUITS[c[1]]; }

function moveText(name) {
  // "play JH" -> "play J♥", "trump H" -> "trump ♥"
  const [verb, arg] = name.split(" ");
  if ((verb === "play" || verb === "discard") && arg && arg.length === 2)
    return `${verb} ${arg[0] === "T" ? "10" : arg[0]}${SUITS[arg[1]]}`;
  if (verb === "trump" && SUITS[arg]) return `trump ${SUITS[arg]}`;
  return name;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) {
    const err = new Error(data.error || `HTTP ${r.status}`);
    err.data = data;
    throw err;
  }
  return data;
}

function esc(text) {
  // text for innerHTML: player names come from uploaded files
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function show(el, on) { el.classList.toggle("hidden", !on); }

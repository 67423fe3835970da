// The daily deal (/play/daily/ for today, /play/daily/{date} for any day): the deal and its commitment, your
// ranked attempt (the first one at today's deal; hints are off while it is unfinished), your result and the
// share text, the leaderboard around you, your history and streak, and once the seed is revealed the par line
// replayed move by move and how to check the day with examples/verify_daily.py.

import { ApiError, get, post } from "./api.js";
import { cardFace, moveText, PILES, pileCards, pileLabel } from "./cards.js";
import { currentToken, showWho, whoAmI } from "./identity.js";
import { followPerson } from "./person-feed.js";
import { byId, clockText, copyButton, el, everySecond, plural, rulesText, setTitle, tellProblem } from "./ui.js";

const askedDay = document.body.dataset.day || null;
let deal = null;
let todayDate = null;
let player = null;
let replay = null;
let step = 0;
let stopClock = () => {};

const signed = (value) => (value > 0 ? `+${value}` : String(value));

function isToday() {
  return deal.date === todayDate;
}

function revealed() {
  return Boolean(deal.seed);
}

function drawDeal() {
  setTitle(`Daily #${deal.number}`);
  byId("daily-title").textContent = `Daily #${deal.number}, ${deal.date}`;
  const facts = [
    ["Opponents", deal.opponents.map((opponent) => `${opponent.name} (${opponent.level})`).join(", ")],
    ["Rules", `${rulesText(deal.rules)}, one hand`],
    ["Commitment", deal.commitment],
    ["Seed", deal.seed || `secret until ${new Date(deal.seed_revealed_at).toUTCString()}`],
  ];
  if (deal.par) facts.push(["Par", `${signed(deal.par.result)} in ${plural(deal.par.turns, "turn")}`]);
  byId("deal-facts").replaceChildren(...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
  stopClock();
  const revealAt = Date.parse(deal.seed_revealed_at);
  const nextDeal = Date.now() + deal.next_deal_in * 1000;
  stopClock = everySecond(() => {
    const lines = [];
    if (isToday()) lines.push(`Next deal in ${clockText((nextDeal - Date.now()) / 1000)}.`);
    if (!revealed()) lines.push(`Ranked attempts close and the seed is revealed in ${clockText((revealAt - Date.now()) / 1000)}.`);
    byId("deal-countdown").textContent = lines.join(" ");
  });
}

async function startAttempt() {
  try {
    const attempt = await post(`daily/${deal.date}/attempts`);
    window.location.assign(`/play/games/${attempt.game.id}?daily=${deal.date}`);
  } catch (error) {
    tellProblem(error, "The attempt did not start: ");
  }
}

function drawAttempt() {
  const body = byId("attempt-body");
  if (!player) {
    body.replaceChildren(el("p", {}, "Register or sign in first: "), el("a", { href: "/play/" }, "the play page"));
    return;
  }
  const attempts = deal.attempts || [];
  const ranked = attempts.find((attempt) => attempt.ranked);
  const today = isToday() && !revealed();
  const gameLink = (attempt) => `/play/games/${attempt.game_id}?daily=${deal.date}`;
  if (ranked && !deal.result) {
    body.replaceChildren(
      el("p", {}, "Your ranked attempt is under way: it counts on the leaderboard, and hints are off until it is finished."),
      el("a", { href: gameLink(ranked), class: "button" }, "Continue your ranked attempt"),
    );
    return;
  }
  if (!ranked && today) {
    body.replaceChildren(
      el("p", { class: "lead" }, "Your first attempt at today’s deal is ranked: it counts on the leaderboard."),
      el("p", {}, "Hints are off while it is unfinished, and so is the analysis of positions. Everyone plays the same cards against the same computers; you may finish it until the seed is revealed."),
      el("button", { type: "button", class: "primary", id: "start-attempt", onclick: startAttempt }, "Play the ranked attempt"),
    );
    return;
  }
  const lines = [];
  if (deal.result) lines.push(el("p", {}, `Your ranked attempt is finished: ${signed(deal.result.result)} in ${plural(deal.result.turns, "turn")}.`));
  else lines.push(el("p", {}, today ? "" : "This day is over for the leaderboard: any attempt now is practice."));
  for (const attempt of attempts) {
    if (!attempt.ranked) lines.push(el("p", {}, el("a", { href: gameLink(attempt) }, `Your practice game of ${new Date(attempt.started_at).toUTCString()}`)));
  }
  lines.push(el("button", { type: "button", id: "start-practice", onclick: startAttempt }, "Practise this deal (not ranked)"));
  body.replaceChildren(...lines);
}

async function drawStanding() {
  const section = byId("standing");
  if (!player) return;
  let standing;
  try {
    standing = await get(`daily/${deal.date}/leaderboard/me`);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "no_ranked_result")) tellProblem(error);
    section.hidden = true;
    return null;
  }
  section.hidden = false;
  const versus = standing.vs_par === null || standing.vs_par === undefined ? "" : ` (${signed(standing.vs_par)} against par)`;
  byId("standing-text").textContent = `${signed(standing.result)}${versus}: rank ${standing.rank} of ${standing.count}, better than or equal to ${standing.percentile}% of the day’s results.${standing.closed ? " It was closed at the deadline, unfinished." : ""}`;
  return standing;
}

function boardRow(entry, you) {
  return el(
    "tr",
    { class: you ? "you" : null },
    el("td", {}, String(entry.rank)),
    el("th", { scope: "row" }, `${entry.player.display_name}${you ? " (you)" : ""}`),
    el("td", {}, signed(entry.result)),
    el("td", {}, String(entry.turns)),
  );
}

async function drawBoard(standing) {
  // The page that reaches a little past your rank (the API pages by cursor, at most 100 a page): the top,
  // then the rows round yours.
  const limit = standing ? Math.min(100, Math.max(10, standing.rank + 2)) : 10;
  let page;
  try {
    page = await get(`daily/${deal.date}/leaderboard?limit=${limit}`);
  } catch (error) {
    tellProblem(error, "The leaderboard could not be read: ");
    return;
  }
  const words = { open: "Open: ranked attempts may still finish.", closing: "Closing: the unfinished attempts are being recorded.", final: "Final." };
  byId("board-status").textContent = `${words[page.status] || page.status} ${plural(page.count, "ranked result")}.`;
  const mine = (entry) => player && entry.player.id === player.id;
  let rows = page.items;
  if (standing && standing.rank > 5 && rows.length > 5) {
    const around = rows.filter((entry) => Math.abs(entry.rank - standing.rank) <= 2 && entry.rank > 3);
    rows = [...rows.slice(0, 3), null, ...around];
  }
  const body = rows.map((entry) =>
    entry === null ? el("tr", {}, el("td", { colspan: "4" }, "…")) : boardRow(entry, mine(entry)),
  );
  if (standing && !page.items.some(mine)) {
    body.push(el("tr", {}, el("td", { colspan: "4" }, "…")));
    body.push(boardRow({ ...standing, player: { display_name: player.display_name } }, true));
  }
  if (!body.length) body.push(el("tr", {}, el("td", { colspan: "4" }, "No ranked results yet.")));
  byId("board-rows").replaceChildren(...body);
}

async function drawHistory() {
  if (!player) return;
  let history;
  try {
    history = await get("players/me/daily");
  } catch (error) {
    tellProblem(error);
    return;
  }
  byId("history").hidden = history.history.length === 0;
  byId("streaks").textContent = `Streak: ${plural(history.current_streak, "day")} (best ${history.best_streak}); mean result ${history.mean_result ?? "–"}.`;
  byId("history-rows").replaceChildren(
    ...history.history.slice(0, 10).map((entry) =>
      el("li", {}, el("a", { href: `/play/daily/${entry.date}` }, `#${entry.number}, ${entry.date}`), `: ${signed(entry.result)}, rank ${entry.rank} of ${entry.count}${entry.vs_par === null || entry.vs_par === undefined ? "" : `, ${signed(entry.vs_par)} against par`}`),
    ),
  );
  const latest = history.history[0];
  const share = byId("share-text");
  share.value = latest && latest.date === deal.date && history.share_text ? history.share_text : "";
  share.closest(".row").hidden = !share.value;
  share.labels.forEach((label) => {
    label.hidden = !share.value;
  });
}

// --- par, replayed -------------------------------------------------------------------------------------

function position(index) {
  return index === 0 ? replay.start : replay.steps[index - 1];
}

function seatName(seat) {
  if (seat === 0) return "The player";
  return replay.opponents.find((opponent) => opponent.seat === seat)?.name || `Seat ${seat}`;
}

function drawStep() {
  const at = position(step);
  byId("par-step").value = String(step);
  byId("par-step").setAttribute("aria-valuetext", `move ${step} of ${replay.steps.length}`);
  byId("par-move").textContent = step === 0 ? `The deal: ${seatName(at.current_seat)} to move. ${plural(replay.steps.length, "move")} follow.` : `Move ${step} of ${replay.steps.length}: ${seatName(replay.steps[step - 1].seat)}: ${moveText(replay.steps[step - 1].move)}.`;
  byId("par-piles").replaceChildren(
    ...PILES.map((name) =>
      el("div", { class: `pile static pile-${name}`, role: "img", "aria-label": `${name}: ${pileLabel(name, at.table.piles[name])}` }, el("span", { class: "pile-name", "aria-hidden": "true" }, name), pileCards(at.table.piles[name])),
    ),
    el("div", { class: "stock" }, `Stock: ${plural(at.table.stock, "card")}`),
  );
  byId("par-hand").replaceChildren(...at.hand.map((card) => cardFace(card)));
  byId("par-counts").textContent = `Cards in hand: ${at.hand_counts.map((count, seat) => `${seatName(seat)} ${count}`).join(", ")}.`;
  byId("par-first").disabled = byId("par-back").disabled = step === 0;
  byId("par-next").disabled = byId("par-last").disabled = step === replay.steps.length;
}

function goTo(index) {
  step = Math.max(0, Math.min(replay.steps.length, index));
  drawStep();
}

async function drawPar() {
  const status = byId("par-status");
  if (!revealed()) {
    status.textContent = "Par is the best result known on the deal, found by a search with every card known. It is worked out after the seed is revealed, and shown here then, move by move.";
    return;
  }
  if (!deal.par) {
    status.textContent = "The seed is revealed; par is being worked out and appears here within minutes.";
    return;
  }
  try {
    replay = await get(`daily/${deal.date}/par`);
  } catch (error) {
    status.textContent = error instanceof ApiError && error.code === "par_not_ready" ? "Par is being worked out." : error.message;
    return;
  }
  status.textContent = "";
  byId("par-summary").textContent = `Par ${signed(replay.par.result)} in ${plural(replay.par.turns, "turn")} (found by ${replay.par.method}). Step through the line: the table and the player’s hand after each move, the computers’ moves included.`;
  byId("par-step").max = String(replay.steps.length);
  byId("par-replay").hidden = false;
  goTo(0);
}

async function drawVerify() {
  const body = byId("verify-body");
  let anchor = null;
  try {
    anchor = (await get(`daily/anchor?date=${deal.date}`, { token: null })).anchor;
  } catch (error) {
    anchor = null;
  }
  const game = (deal.attempts || []).find((attempt) => attempt.ranked)?.game_id;
  const command = [
    "python3 examples/verify_daily.py",
    `--base-url ${window.location.origin}`,
    anchor ? `--anchor ${anchor}` : "--anchor <the season's anchor>",
    deal.date,
    game ? `--game ${game} --token <your token>` : "",
  ].filter(Boolean).join(" ");
  body.replaceChildren(
    el("p", {}, `The deal was fixed before anyone played: its commitment is the SHA-256 of the seed, and every seed of the season hashes forward to the season’s anchor${anchor ? ` (${anchor})` : ""}, published before the season began. `, el("a", { href: "/api/v1/rules.md" }, "The rules document"), " explains the seed chain and how the cards are dealt from a seed."),
    revealed()
      ? el("p", {}, "Now that the seed is revealed, check the day with the verifier that ships with the API’s source (standard library only, none of the server’s code): it re-deals the cards, replays your game move by move with its own rules and its own normal player, and checks your leaderboard entry.")
      : el("p", {}, `Save the anchor now; once the seed is revealed (${new Date(deal.seed_revealed_at).toUTCString()}) the verifier can check the day:`),
    el("pre", {}, el("code", { id: "verify-command" }, command)),
  );
}

async function drawAll() {
  try {
    deal = await get(askedDay ? `daily/${encodeURIComponent(askedDay)}` : "daily");
  } catch (error) {
    byId("loading").textContent = error instanceof ApiError && error.status === 404 ? "There is no daily deal for that day." : `The daily deal could not be read: ${error.message}`;
    return;
  }
  if (!askedDay) todayDate = deal.date;
  else if (todayDate === null) todayDate = (await get("daily").catch(() => ({ date: "" }))).date;
  byId("loading").hidden = true;
  byId("daily").hidden = false;
  drawDeal();
  drawAttempt();
  const standing = await drawStanding();
  await drawBoard(standing);
  await drawHistory();
  await drawPar();
  await drawVerify();
}

function followFeed() {
  followPerson({
    onEvent(type, event) {
      if (type.startsWith("daily_") && (!event.date || event.date === deal?.date)) drawAll();
    },
    onResync() {
      drawAll();
    },
  });
}

async function main() {
  byId("par-first").addEventListener("click", () => goTo(0));
  byId("par-back").addEventListener("click", () => goTo(step - 1));
  byId("par-next").addEventListener("click", () => goTo(step + 1));
  byId("par-last").addEventListener("click", () => goTo(replay.steps.length));
  byId("par-step").addEventListener("input", (event) => goTo(Number(event.target.value)));
  copyButton(byId("copy-share"), byId("share-text"), "The share text");
  player = await whoAmI().catch(() => null);
  showWho(player);
  await drawAll();
  if (currentToken()) followFeed();
}

main();

// The table (/play/games/{id}): your hand, the eight piles, the other seats, whose turn it is and the clock.
// You play a card by picking it and then the pile it goes on (or a side pile, then the pile it moves onto),
// with the mouse or the keyboard; each move is sent as it is made, against the game's version, and a 409
// version_conflict shows the game as it is now. The game stream brings what the others do; a table that
// waits shows its invitation link; a hand over and the game over show the scores, and a rematch.

import { ApiError, get, post } from "./api.js";
import { cardFace, cardName, cardText, moveText, PILE_NAMES, PILES, pileCards, pileLabel, SIDES } from "./cards.js";
import { GameStream } from "./game-stream.js";
import { showWho, whoAmI } from "./identity.js";
import { followPerson } from "./person-feed.js";
import { byId, clockText, clockWords, copyButton, el, plural, rulesText, setTitle, targetText, tell, tellProblem } from "./ui.js";

const gameId = document.body.dataset.game;
const dailyDay = new URLSearchParams(window.location.search).get("daily");
const LOG_LIMIT = 200;
// The piles as they lie round the stock, for the arrow keys: [row, column].
const PLACES = { NW: [0, 0], N: [0, 1], NE: [0, 2], W: [1, 0], E: [1, 2], SW: [2, 0], S: [2, 1], SE: [2, 2] };

let view = null;
let selected = null; // {card} or {pile}
let busy = false;
let hintsAllowed = true;
let daily = null; // {number, ranked} when this game is a daily attempt of yours
let stream = null;
let clockTimer = null;
let rereadTimer = null;
let focusedCard = null;
let focusedPile = "N";
const logged = new Set();

// --- what the view says ----------------------------------------------------------------------------------

function seatName(seat) {
  if (view && seat === view.your_seat) return "You";
  const player = view?.players.find((entry) => entry.seat === seat) || view?.seats.find((entry) => entry.seat === seat);
  return player?.name || `Seat ${seat}`;
}

function legal() {
  const plays = new Map();
  const pileMoves = new Map();
  let canEnd = false;
  for (const move of view.legal_moves) {
    if (move.type === "play") plays.set(move.card, [...(plays.get(move.card) || []), move.to]);
    else if (move.type === "move_pile") pileMoves.set(move.from, [...(pileMoves.get(move.from) || []), move.to]);
    else if (move.type === "end_turn") canEnd = true;
  }
  return { plays, pileMoves, canEnd };
}

function targets() {
  if (!selected) return [];
  const { plays, pileMoves } = legal();
  return selected.card ? plays.get(selected.card) || [] : pileMoves.get(selected.pile) || [];
}

function playing() {
  return view.status === "playing" && view.is_your_turn;
}

// --- the log -------------------------------------------------------------------------------------------

function eventText(event) {
  const who = seatName(event.seat);
  switch (event.type) {
    case "deal": return `Hand ${event.hand_number} dealt; ${plural(event.stock, "card")} in the stock.`;
    case "turn_start": return event.seat === view.your_seat ? "Your turn." : `${who}’s turn.`;
    case "draw": return event.card ? `You drew the ${cardName(event.card)} (${cardText(event.card)}).` : `${who} drew a card.`;
    case "play": return `${who} played ${cardText(event.card)} on ${event.to}.`;
    case "move_pile": return `${who} moved pile ${event.from} onto ${event.to}.`;
    case "end_turn": return `${who} ended the turn.`;
    case "hand_over": return event.out_seat === null ? "The hand is blocked." : `${seatName(event.out_seat)} went out: the hand is over.`;
    case "game_over": return event.winners.includes(view.your_seat) ? "Game over: you won." : `Game over: ${event.winners.map(seatName).join(" and ")} won.`;
    case "seat_taken": return `${event.name} took seat ${event.seat}.`;
    case "seat_left": return event.computer ? `${event.name} left; ${event.computer} plays the seat.` : `${event.name} left; the seat is free.`;
    case "seat_replaced": return `${event.name} was away too long: ${event.computer} plays the seat.`;
    case "game_started": return "The table started.";
    case "turn_timed_out": return `${who} ran out of time: a computer played the turn.`;
    case "rematch": return "A rematch was started.";
    default: return event.type;
  }
}

function log(events) {
  const list = byId("log");
  for (const event of events) {
    if (logged.has(event.seq)) continue;
    logged.add(event.seq);
    list.append(el("li", { dataset: { seq: event.seq, type: event.type } }, eventText(event)));
  }
  while (list.children.length > LOG_LIMIT) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

// --- drawing -------------------------------------------------------------------------------------------

function rememberFocus() {
  const active = document.activeElement;
  if (active?.dataset?.card && active.closest("#hand")) return { card: active.dataset.card, index: [...byId("hand").children].indexOf(active) };
  if (active?.dataset?.pile) return { pile: active.dataset.pile };
  if (active?.id) return { id: active.id };
  return null;
}

function restoreFocus(focus) {
  if (!focus) return;
  if (focus.card !== undefined) {
    const cards = [...byId("hand").children];
    const same = cards.find((button) => button.dataset.card === focus.card) || cards[Math.min(focus.index, cards.length - 1)];
    if (same) {
      same.focus();
      return;
    }
    byId("end-turn").focus();
  } else if (focus.pile) {
    byId("piles").querySelector(`[data-pile="${focus.pile}"]`)?.focus();
  } else if (focus.id) {
    const again = byId(focus.id);
    if (again && !again.hidden) again.focus();
  }
}

function drawPlayers() {
  byId("players").replaceChildren(
    ...view.players.map((player) => {
      const current = view.current_seat === player.seat && view.status === "playing";
      const you = player.seat === view.your_seat;
      const kind = player.kind === "computer" ? `computer, ${player.level}` : "person";
      return el(
        "li",
        { class: current ? "current" : null, dataset: { seat: player.seat } },
        el("span", { class: "name" }, you ? `${player.name} (you)` : player.name || "Free seat"),
        current ? el("span", { class: "visually-hidden" }, ", to move") : null,
        el("br"),
        el("span", {}, `${kind} · ${plural(player.hand_count, "card")} · score ${player.score}`),
      );
    }),
  );
}

function turnWords() {
  if (view.status === "finished") {
    return view.winners?.includes(view.your_seat) ? "Game over: you won!" : `Game over: ${(view.winners || []).map(seatName).join(" and ")} won.`;
  }
  if (view.status === "hand_over") return "The hand is over.";
  if (view.is_your_turn) return "Your turn: play cards, then end your turn.";
  return `Waiting for ${seatName(view.current_seat)}.`;
}

function drawClock() {
  window.clearInterval(clockTimer);
  const clock = byId("clock");
  if (!view.turn_deadline || view.status !== "playing") {
    clock.hidden = true;
    return;
  }
  const deadline = Date.parse(view.turn_deadline);
  const whose = view.is_your_turn ? "You have" : `${seatName(view.current_seat)} has`;
  const tick = () => {
    const left = (deadline - Date.now()) / 1000;
    clock.hidden = false;
    clock.classList.toggle("low", left < 15);
    clock.textContent = left > 0 ? `${whose} ${clockText(left)} for this turn.` : "Time is up: a computer plays the turn.";
  };
  tick();
  clockTimer = window.setInterval(tick, 1000);
}

function drawPiles() {
  const fits = targets();
  const { pileMoves } = legal();
  const grid = byId("piles");
  if (!PILES.includes(focusedPile)) focusedPile = "N";
  const buttons = PILES.map((name) => {
    const cards = view.table.piles[name];
    const target = fits.includes(name);
    const chosen = selected?.pile === name;
    let label = pileLabel(name, cards);
    if (target) label += selected.card ? `; the ${cardName(selected.card)} goes here` : `; pile ${selected.pile} can move here`;
    if (chosen) label += "; picked to move";
    if (!selected && pileMoves.has(name)) label += "; it can move";
    return el(
      "button",
      {
        type: "button",
        class: `pile pile-${name}${target ? " target" : ""}${chosen ? " chosen" : ""}`,
        dataset: { pile: name, count: cards.length, target: String(target), movable: String(!selected && pileMoves.has(name)) },
        tabindex: name === focusedPile ? "0" : "-1",
        onclick: () => pickPile(name),
        onfocus: () => {
          focusedPile = name;
        },
      },
      el("span", { class: "pile-name" }, name),
      el("span", { class: "visually-hidden" }, `: ${label}`),
      pileCards(cards),
    );
  });
  const stock = el("div", { class: "stock" }, el("span", { class: "card face-down", "aria-hidden": "true" }), el("span", {}, `Stock: ${plural(view.table.stock, "card")}`));
  grid.replaceChildren(...buttons, stock);
}

function drawHand() {
  const { plays } = legal();
  const hand = byId("hand");
  if (!view.hand.includes(focusedCard)) focusedCard = view.hand[0] || null;
  hand.replaceChildren(
    ...view.hand.map((card) => {
      const playable = plays.has(card);
      const pressed = selected?.card === card;
      return el(
        "button",
        {
          type: "button",
          class: playable ? "card-button playable" : "card-button",
          "aria-pressed": pressed ? "true" : "false",
          dataset: { card, playable: playable ? "true" : "false" },
          tabindex: card === focusedCard ? "0" : "-1",
          onclick: () => pickCard(card),
          onfocus: () => {
            focusedCard = card;
          },
        },
        cardFace(card, { label: false }),
        el("span", { class: "visually-hidden" }, `${cardName(card)}${playable ? ", can be played" : ""}`),
      );
    }),
  );
  if (!view.hand.length) hand.append(el("p", {}, view.status === "waiting" ? "" : "No cards in your hand."));
}

function drawSelection() {
  const line = byId("selection");
  byId("cancel").hidden = !selected;
  if (!selected) {
    line.textContent = playing() ? "Pick a card to play, or a side pile to move." : "";
    return;
  }
  const fits = targets();
  if (selected.card) {
    line.textContent = fits.length
      ? `${cardText(selected.card)} picked: it goes on ${fits.join(", ")}. Pick the pile.`
      : `${cardText(selected.card)} picked: it fits on no pile now.`;
  } else {
    line.textContent = fits.length
      ? `Pile ${selected.pile} picked: it moves onto ${fits.join(", ")}. Pick where.`
      : `Pile ${selected.pile} picked: it can move nowhere now.`;
  }
}

function drawActions() {
  const { canEnd } = legal();
  const endTurn = byId("end-turn");
  endTurn.setAttribute("aria-disabled", canEnd && !busy ? "false" : "true");
  endTurn.hidden = view.status !== "playing";
  byId("hint").hidden = !(hintsAllowed && playing());
  byId("deal").hidden = view.status !== "hand_over";
}

function drawResult() {
  const section = byId("result");
  const result = view.hand_result;
  const over = view.status === "hand_over" || view.status === "finished";
  section.hidden = !over;
  if (!over) return;
  byId("result-title").textContent = view.status === "finished" ? "Game over" : `Hand ${result?.hand_number ?? view.hand_number} over`;
  let summary = "";
  if (view.status === "finished" && view.closed_reason === "attempt_expired") summary = "The day’s deadline passed: the attempt was closed as it stood.";
  else if (result) summary = result.reason === "out" ? `${seatName(result.out_seat)} went out.` : "The hand was blocked: nobody could play.";
  if (view.status === "finished" && view.winners) summary += ` ${view.winners.includes(view.your_seat) ? "You won the game!" : `${view.winners.map(seatName).join(" and ")} won the game.`}`;
  if (view.status === "hand_over") summary += " Anyone at the table may deal the next hand.";
  byId("result-summary").textContent = summary.trim();
  byId("result-rows").replaceChildren(
    ...view.players.map((player) =>
      el(
        "tr",
        { class: player.seat === view.your_seat ? "you" : null },
        el("th", { scope: "row" }, player.seat === view.your_seat ? `${player.name} (you)` : player.name),
        el("td", {}, el("span", { class: "cards-left" }, (result?.hands[player.seat] || []).map((card) => cardFace(card)))),
        el("td", {}, String(result?.penalties[player.seat] ?? 0)),
        el("td", {}, String(result?.scores[player.seat] ?? player.score)),
      ),
    ),
  );
  const finished = view.status === "finished";
  byId("after-game").hidden = !finished;
  byId("rematch").hidden = !finished || Boolean(daily) || Boolean(view.rematch);
  const rematchLink = byId("rematch-link");
  rematchLink.hidden = !view.rematch;
  if (view.rematch) rematchLink.href = `/play/games/${view.rematch}`;
  const dailyLink = byId("daily-result-link");
  dailyLink.hidden = !daily;
  if (daily) dailyLink.href = `/play/daily/${dailyDay}`;
}

function drawWaiting() {
  byId("waiting").hidden = false;
  byId("board").hidden = true;
  const invitation = byId("invitation");
  invitation.hidden = !view.invitation;
  if (view.invitation) byId("invitation-link").value = view.invitation.url;
  byId("waiting-seats").replaceChildren(
    ...view.seats.map((seat) =>
      el(
        "li",
        { class: seat.name ? null : "free", dataset: { seat: seat.seat } },
        `Seat ${seat.seat}: `,
        seat.kind === "computer" ? `${seat.name} (computer, ${seat.level})` : seat.name ? `${seat.name}${seat.you ? " (you)" : ""}` : "free, for a person with the link",
      ),
    ),
  );
  byId("waiting-clock").textContent = `${view.turn_seconds ? `Turn clock: ${clockWords(view.turn_seconds)} a turn` : "No turn clock"}; ${rulesText(view.rules)}, to ${targetText(view.target_score)}.`;
  byId("start-now").hidden = view.your_seat !== 0;
}

function render() {
  const focus = rememberFocus();
  // What the page shows, on the body: read by tests that wait for the page, and by style.
  Object.assign(document.body.dataset, { version: view.version, status: view.status, hand: view.hand_number, yourTurn: String(playing()) });
  byId("loading").hidden = true;
  const others = view.seats.filter((seat) => !seat.you).map((seat) => seat.name || "a free seat");
  byId("table-title").textContent = `Table with ${others.join(", ")}`;
  if (view.status === "waiting") {
    setTitle("Waiting for people");
    drawWaiting();
    restoreFocus(focus);
    return;
  }
  byId("waiting").hidden = true;
  byId("board").hidden = false;
  setTitle(view.status === "finished" ? "Game over" : view.is_your_turn ? "Your turn" : "Table");
  if (!playing()) selected = null;
  drawPlayers();
  // Said again only when it changes: the line is a live region, which screen readers announce.
  const words = turnWords();
  if (byId("turn-status").textContent !== words) byId("turn-status").textContent = words;
  drawClock();
  drawPiles();
  drawHand();
  drawSelection();
  drawActions();
  drawResult();
  restoreFocus(focus);
}

// A newer view of the game (a response, or a read after the stream said it changed).
function show(next, events = next.events || []) {
  if (view && next.version < view.version) return;
  const wasInPlay = view && view.status !== "hand_over" && view.status !== "finished";
  const started = view && view.status === "waiting" && next.status !== "waiting";
  if (view && next.version !== view.version) byId("hint-text").hidden = true;
  view = next;
  log(events);
  render();
  if (started) tell("Everyone is seated: the table has started.");
  if (wasInPlay && (view.status === "hand_over" || view.status === "finished")) byId("result-title").focus();
}

async function reread() {
  try {
    show(await get(`games/${gameId}`), []);
  } catch (error) {
    tellProblem(error, "The game could not be read again: ");
  }
}

function rereadSoon() {
  window.clearTimeout(rereadTimer);
  rereadTimer = window.setTimeout(reread, 150);
}

// --- acting --------------------------------------------------------------------------------------------

async function send(moves) {
  if (busy) return;
  busy = true;
  drawActions();
  try {
    const next = await post(`games/${gameId}/moves`, { moves, expected_version: view.version });
    selected = null;
    show(next);
    if (moves[0].type !== "end_turn") focusHand();
  } catch (error) {
    busy = false;
    if (error instanceof ApiError && error.code === "version_conflict" && error.problem.current) {
      selected = null;
      show(error.problem.current, []);
      tell("The game moved on before your move arrived (a move made elsewhere, or the clock): this is the table as it is now. Choose again.", { problem: true });
    } else if (error instanceof ApiError && error.status === 409) {
      tellProblem(error);
      selected = null;
      await reread();
    } else if (error instanceof ApiError && (error.status === 422 || error.status === 400)) {
      tellProblem(error, "Not allowed: ");
    } else {
      tellProblem(error);
      await reread();
    }
  } finally {
    busy = false;
    if (view) drawActions();
  }
}

function focusHand() {
  const card = byId("hand").querySelector('button[tabindex="0"]') || byId("hand").querySelector("button");
  (card || byId("end-turn")).focus();
}

function pickCard(card) {
  if (!playing()) {
    tell(view.status === "playing" ? "It is not your turn yet." : "No hand is in play.");
    return;
  }
  selected = selected?.card === card ? null : { card };
  focusFirstTarget();
}

// After a pick, the focus goes to the first pile the card (or pile) fits on, so that Enter plays it there.
function focusFirstTarget() {
  const fits = targets();
  if (fits.length) focusedPile = fits[0];
  drawPiles();
  drawHand();
  drawSelection();
  if (fits.length) byId("piles").querySelector(`[data-pile="${fits[0]}"]`).focus();
}

function pickPile(name) {
  if (!playing()) {
    tell(view.status === "playing" ? "It is not your turn yet." : "No hand is in play.");
    return;
  }
  if (selected?.card) {
    send([{ type: "play", card: selected.card, to: name }]);
    return;
  }
  if (selected?.pile) {
    if (selected.pile === name) selected = null;
    else {
      send([{ type: "move_pile", from: selected.pile, to: name }]);
      return;
    }
  } else if (!SIDES.includes(name)) {
    tell(`A corner pile never moves; pick a card to play on the ${PILE_NAMES[name]}.`);
    return;
  } else if (!view.table.piles[name].length) {
    tell("That pile is empty: pick a card to start it.");
    return;
  } else {
    selected = { pile: name };
    focusFirstTarget();
    return;
  }
  drawPiles();
  drawHand();
  drawSelection();
}

function letGo() {
  if (!selected) return;
  selected = null;
  drawPiles();
  drawHand();
  drawSelection();
}

async function endTurn() {
  if (byId("end-turn").getAttribute("aria-disabled") === "true") {
    tell(view.status === "playing" && !view.is_your_turn ? "It is not your turn yet." : "You cannot end a turn now.");
    return;
  }
  await send([{ type: "end_turn" }]);
}

async function hint() {
  try {
    const answer = await get(`games/${gameId}/hint`);
    const text = byId("hint-text");
    text.hidden = false;
    text.textContent = answer.moves.length
      ? `Hint: ${answer.moves.map(moveText).join(", then ")}.`
      : "Hint: nothing to do but end the turn.";
    const first = answer.moves[0];
    if (first?.type === "play") {
      selected = { card: first.card };
      focusedCard = first.card;
      drawPiles();
      drawHand();
      drawSelection();
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) {
      hintsAllowed = false;
      drawActions();
    }
    tellProblem(error, "No hint: ");
  }
}

async function dealNext() {
  // The page's version can be behind the game's (its stream still on the way, or a write elsewhere); when the
  // 409's `current` says the hand is still over, the person still wants the next one: deal at that version.
  // When someone else at the table dealt first, `current` is in play and is shown as it is.
  for (let tries = 0; tries < 3; tries += 1) {
    try {
      show(await post(`games/${gameId}/hands`, { expected_version: view.version }));
      return;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409) {
        tellProblem(error, "Not dealt: ");
        return;
      }
      const current = error.problem.current;
      if (!current) {
        await reread();
        return;
      }
      show(current, []);
      if (current.status !== "hand_over") return;
    }
  }
  tellProblem(new ApiError(409, { detail: "The game kept changing; press Deal again." }), "Not dealt: ");
}

async function rematch() {
  try {
    const next = await post(`games/${gameId}/rematch`);
    window.location.assign(`/play/games/${next.id}`);
  } catch (error) {
    tellProblem(error, "No rematch: ");
  }
}

async function startNow() {
  try {
    show(await post(`games/${gameId}/start`));
  } catch (error) {
    tellProblem(error, "Not started: ");
    await reread();
  }
}

async function leave() {
  const button = byId("leave");
  if (button.dataset.sure !== "true") {
    button.dataset.sure = "true";
    button.textContent = "Leave for good? Press again";
    return;
  }
  try {
    await post(`games/${gameId}/leave`);
    window.location.assign("/play/");
  } catch (error) {
    tellProblem(error, "Not left: ");
  }
}

// --- keys ----------------------------------------------------------------------------------------------

function moveAlong(container, selector, key) {
  const items = [...container.querySelectorAll(selector)];
  const index = items.indexOf(document.activeElement);
  if (index < 0) return false;
  let next = index;
  if (key === "ArrowRight" || key === "ArrowDown") next = Math.min(items.length - 1, index + 1);
  else if (key === "ArrowLeft" || key === "ArrowUp") next = Math.max(0, index - 1);
  else if (key === "Home") next = 0;
  else if (key === "End") next = items.length - 1;
  else return false;
  items[index].tabIndex = -1;
  items[next].tabIndex = 0;
  items[next].focus();
  return true;
}

function movePileFocus(key) {
  const from = document.activeElement?.dataset?.pile;
  if (!from) return false;
  const steps = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const step = steps[key];
  if (!step) return false;
  let [row, column] = PLACES[from];
  for (let i = 0; i < 3; i += 1) {
    row += step[0];
    column += step[1];
    if (row < 0 || row > 2 || column < 0 || column > 2) return true;
    const found = Object.entries(PLACES).find(([, place]) => place[0] === row && place[1] === column);
    if (found) {
      const button = byId("piles").querySelector(`[data-pile="${found[0]}"]`);
      document.activeElement.tabIndex = -1;
      button.tabIndex = 0;
      button.focus();
      return true;
    }
  }
  return true;
}

function keys() {
  byId("hand").addEventListener("keydown", (event) => {
    if (moveAlong(byId("hand"), "button", event.key)) event.preventDefault();
  });
  byId("piles").addEventListener("keydown", (event) => {
    if (movePileFocus(event.key)) event.preventDefault();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") letGo();
  });
}

// --- the start -----------------------------------------------------------------------------------------

async function checkDaily() {
  if (!dailyDay) return;
  try {
    const day = await get(`daily/${encodeURIComponent(dailyDay)}`);
    const attempt = (day.attempts || []).find((entry) => entry.game_id === gameId);
    if (!attempt) return;
    daily = { number: day.number, ranked: attempt.ranked };
    const banner = byId("daily-banner");
    banner.hidden = false;
    if (attempt.ranked) {
      hintsAllowed = false;
      banner.textContent = `Daily #${day.number} (${day.date}), your ranked attempt: it counts on the leaderboard, and hints are off until it is finished.`;
    } else {
      banner.textContent = `Daily #${day.number} (${day.date}), practice: it does not count on the leaderboard.`;
    }
  } catch (error) {
    tellProblem(error, "The daily deal could not be read: ");
  }
}

function follow(after) {
  if (view.status === "finished") return;
  stream = new GameStream(gameId, {
    after,
    onEvent(type, event) {
      log([event]);
      // A seat handed to a computer changes the seats (and whose the absent seat is): read the game again.
      if (type === "rematch" || type === "seat_replaced" || event.version > view.version) rereadSoon();
    },
    onReopen: reread,
    onEnd(error) {
      if (error) tellProblem(error, "The table’s live feed stopped: ");
    },
  }).start();
}

function followFeed() {
  followPerson({
    onEvent(type, event, { history }) {
      if (event.game === gameId) {
        if (type === "rematch" || event.version === undefined || !view || event.version > view.version) rereadSoon();
        return;
      }
      if (type === "your_turn" && event.game && !history) tell("It is your turn at another table.", { link: { href: `/play/games/${event.game}`, text: "Open it" } });
    },
    onResync() {
      rereadSoon();
    },
  });
}

async function main() {
  keys();
  byId("end-turn").addEventListener("click", endTurn);
  byId("cancel").addEventListener("click", letGo);
  byId("hint").addEventListener("click", hint);
  byId("deal").addEventListener("click", dealNext);
  byId("rematch").addEventListener("click", rematch);
  byId("start-now").addEventListener("click", startNow);
  byId("leave").addEventListener("click", leave);
  copyButton(byId("copy-invitation"), byId("invitation-link"), "The invitation link");
  const player = await whoAmI().catch(() => null);
  showWho(player);
  if (!player) {
    byId("loading").replaceChildren("You are not signed in in this browser. ", el("a", { href: "/play/" }, "Register or sign in"), " first.");
    return;
  }
  await checkDaily();
  let first;
  try {
    first = await get(`games/${gameId}`);
  } catch (error) {
    byId("loading").textContent = error instanceof ApiError && error.status === 404 ? "There is no such game, or you hold no seat at it." : `The game could not be read: ${error.message}`;
    return;
  }
  // The events of the last write: what just happened, and where the stream takes up.
  const recent = first.version > 1 ? await get(`games/${gameId}?since_version=${first.version - 1}`).catch(() => first) : await get(`games/${gameId}?since_version=0`).catch(() => first);
  const events = recent.events || [];
  const after = recent.more_events_after ?? (events.length ? events[events.length - 1].seq : 0);
  show(recent, events);
  follow(after);
  followFeed();
}

main();

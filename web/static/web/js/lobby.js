// The play page (/play/): who you are (register, or sign in with a token from another device), a new game
// against the computers, a table with friends, today's daily deal and your games.

import { ApiError, get, post } from "./api.js";
import { currentToken, forgetToken, keepToken, register, showWho, whoAmI } from "./identity.js";
import { followPerson, forgetPersonFeedPosition } from "./person-feed.js";
import { byId, clockText, copyButton, el, everySecond, rulesText, tell, tellProblem } from "./ui.js";

const COMPUTERS = ["Millie", "Roy", "Bess"];
const LEVELS = [
  ["easy", "easy"],
  ["normal", "normal"],
  ["sharp", "sharp"],
];
const STATUS_WORDS = {
  waiting: "waiting for people",
  playing: "in play",
  hand_over: "between hands",
  finished: "finished",
};

let feed = null;
let stopCountdown = () => {};

function levelSelect(id, label, chosen = "normal") {
  return [
    el("label", { for: id }, label),
    el("select", { id }, LEVELS.map(([value, words]) => el("option", { value, selected: value === chosen }, words))),
  ];
}

function drawLevels() {
  const count = Number(byId("new-game-opponents").value);
  const fieldset = byId("new-game-levels");
  fieldset.replaceChildren(el("legend", {}, "Their levels"));
  for (let seat = 1; seat <= count; seat += 1) {
    fieldset.append(...levelSelect(`level-${seat}`, `${COMPUTERS[seat - 1]} (seat ${seat})`));
  }
}

function drawOtherSeats() {
  const count = Number(byId("new-table-seats").value);
  const fieldset = byId("new-table-others");
  fieldset.replaceChildren(el("legend", {}, "Who sits in the other seats"));
  for (let seat = 1; seat < count; seat += 1) {
    const id = `seat-${seat}`;
    fieldset.append(
      el("label", { for: id }, `Seat ${seat}`),
      el(
        "select",
        { id },
        el("option", { value: "person", selected: true }, "A friend, by the link"),
        LEVELS.map(([value, words]) => el("option", { value: `computer:${value}` }, `A computer, ${words}`)),
      ),
    );
  }
}

function fillRuleSets(rules) {
  for (const id of ["new-game-rules", "new-table-rules"]) {
    const select = byId(id);
    select.replaceChildren(
      ...rules.rule_sets.map((set) =>
        el("option", { value: set.name, selected: set.name === rules.default_rule_set }, set.name),
      ),
    );
  }
  const meaning = () => {
    const chosen = rules.rule_sets.find((set) => set.name === byId("new-game-rules").value);
    byId("new-game-rules-meaning").textContent = chosen ? chosen.description : "";
  };
  byId("new-game-rules").addEventListener("change", meaning);
  meaning();
}

// The rule set chosen, or the server's default while the list of rule sets is still on its way.
function ruleSet(id) {
  return byId(id).value || undefined;
}

function target(id) {
  const value = byId(id).value;
  return value ? Number(value) : null;
}

async function startGame(event) {
  event.preventDefault();
  const opponents = Number(byId("new-game-opponents").value);
  const levels = [];
  for (let seat = 1; seat <= opponents; seat += 1) levels.push(byId(`level-${seat}`).value);
  try {
    const game = await post("games", {
      opponents,
      levels,
      rules: ruleSet("new-game-rules"),
      target_score: target("new-game-target"),
    });
    window.location.assign(`/play/games/${game.id}`);
  } catch (error) {
    tellProblem(error, "The game was not started: ");
  }
}

async function createTable(event) {
  event.preventDefault();
  const count = Number(byId("new-table-seats").value);
  const seats = [{ kind: "person" }];
  for (let seat = 1; seat < count; seat += 1) {
    const [kind, level] = byId(`seat-${seat}`).value.split(":");
    seats.push(kind === "person" ? { kind } : { kind, level });
  }
  const clock = byId("new-table-clock").value;
  try {
    const table = await post("games", {
      seats,
      turn_seconds: clock ? Number(clock) : null,
      rules: ruleSet("new-table-rules"),
      target_score: target("new-table-target"),
    });
    window.location.assign(`/play/games/${table.id}`);
  } catch (error) {
    tellProblem(error, "The table was not created: ");
  }
}

function gameLine(game) {
  const you = game.players.find((player) => player.seat === game.your_seat);
  const others = game.players.filter((player) => player.seat !== game.your_seat);
  const names = others.map((player) => player.name || "a free seat").join(", ");
  const scores = game.status === "waiting" ? "" : ` · you ${you?.score ?? 0}`;
  return el(
    "li",
    { dataset: { game: game.id } },
    el("a", { href: `/play/games/${game.id}` }, `With ${names}`),
    el("span", { class: "tag" }, STATUS_WORDS[game.status] || game.status),
    game.is_your_turn ? el("span", { class: "tag your-turn" }, "your turn") : null,
    el("span", { class: "hint" }, `${rulesText(game.rules)}${scores}`),
  );
}

let nextGames = null;

async function showGames(more = false) {
  const list = byId("game-list");
  try {
    const page = await get(more && nextGames ? nextGames : "games");
    if (!more) list.replaceChildren();
    list.append(...page.items.map(gameLine));
    nextGames = page.next;
    byId("games-more").hidden = !page.next;
    byId("games-empty").hidden = list.children.length > 0;
  } catch (error) {
    tellProblem(error, "Your games could not be read: ");
  }
}

async function showDaily() {
  const body = byId("daily-card-body");
  stopCountdown();
  try {
    const day = await get("daily");
    const attempts = day.attempts || [];
    const ranked = attempts.find((attempt) => attempt.ranked);
    let yours;
    if (day.result) {
      yours = `Your ranked result: ${day.result.result > 0 ? "+" : ""}${day.result.result}, rank ${day.result.rank} of ${day.result.count}.`;
    } else if (ranked) {
      yours = "Your ranked attempt is under way.";
    } else {
      yours = "You have not played it yet: your first attempt is ranked.";
    }
    const countdown = el("p", { class: "countdown", id: "daily-countdown" });
    body.replaceChildren(
      el("p", { class: "lead" }, `Daily #${day.number}, ${day.date}`),
      el("p", {}, `Against ${day.opponents.map((opponent) => `${opponent.name} (${opponent.level})`).join(", ")}; ${rulesText(day.rules)}, one hand.`),
      el("p", {}, yours),
      countdown,
      el("a", { href: "/play/daily/", class: "button" }, ranked && !day.result ? "Back to your attempt" : "Play the daily deal"),
    );
    const ends = Date.now() + day.next_deal_in * 1000;
    stopCountdown = everySecond(() => {
      countdown.textContent = `Next deal in ${clockText((ends - Date.now()) / 1000)}`;
    });
  } catch (error) {
    body.replaceChildren(el("p", {}, error instanceof ApiError ? error.message : "The daily deal could not be read."));
  }
}

let refreshTimer = null;
function refreshSoon(what) {
  window.clearTimeout(refreshTimer);
  refreshTimer = window.setTimeout(() => {
    showGames();
    if (what === "daily") showDaily();
  }, 300);
}

function followFeed() {
  feed?.stop();
  feed = followPerson({
    onEvent(type, event, { history }) {
      if (type.startsWith("daily_")) {
        refreshSoon("daily");
        return;
      }
      refreshSoon("games");
      if (history) return;
      if (type === "your_turn") tell("It is your turn at a table.", { link: { href: `/play/games/${event.game}`, text: "Open it" } });
      if (type === "game_started") tell("A table of yours has started.", { link: { href: `/play/games/${event.game}`, text: "Open it" } });
    },
    onResync() {
      refreshSoon("daily");
    },
  });
}

async function signedIn(player) {
  showWho(player);
  byId("signed-out").hidden = true;
  byId("signed-in").hidden = false;
  byId("me-name").textContent = player.display_name;
  byId("token-text").value = currentToken();
  byId("play-area").hidden = false;
  showGames();
  showDaily();
  followFeed();
  try {
    fillRuleSets(await get("rules", { token: null }));
  } catch (error) {
    tellProblem(error, "The rule sets could not be read: ");
  }
}

function signedOut() {
  showWho(null);
  feed?.stop();
  byId("signed-in").hidden = true;
  byId("signed-out").hidden = false;
  byId("play-area").hidden = true;
}

async function onRegister(event) {
  event.preventDefault();
  try {
    const player = await register(byId("register-name").value);
    tell(`Welcome, ${player.display_name}. This browser keeps your token.`);
    signedIn(player);
  } catch (error) {
    tellProblem(error, "Not registered: ");
  }
}

async function onSignIn(event) {
  event.preventDefault();
  forgetPersonFeedPosition();
  keepToken(byId("sign-in-token").value);
  const player = await whoAmI();
  if (player) {
    tell(`Signed in as ${player.display_name}.`);
    byId("sign-in-token").value = "";
    signedIn(player);
  } else {
    tell("That token is not valid: check it, or register.", { problem: true });
  }
}

async function main() {
  drawLevels();
  drawOtherSeats();
  byId("new-game-opponents").addEventListener("change", drawLevels);
  byId("new-table-seats").addEventListener("change", drawOtherSeats);
  byId("new-game-form").addEventListener("submit", startGame);
  byId("new-table-form").addEventListener("submit", createTable);
  byId("register-form").addEventListener("submit", onRegister);
  byId("sign-in-form").addEventListener("submit", onSignIn);
  byId("games-more").addEventListener("click", () => showGames(true));
  copyButton(byId("copy-token"), byId("token-text"), "Your token");
  byId("sign-out").addEventListener("click", () => {
    forgetToken();
    forgetPersonFeedPosition();
    tell("Signed out on this device. Your token still works where you kept it.");
    signedOut();
  });
  let player;
  try {
    player = await whoAmI();
  } catch (error) {
    // Not a refused token but no answer: the token stays, and no form offers to replace it.
    tellProblem(error, "You could not be signed in: ");
    byId("identity").append(el("p", {}, "The server did not answer. Reload the page to try again."));
    return;
  }
  if (player) signedIn(player);
  else signedOut();
}

main();

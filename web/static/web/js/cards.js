// Cards as a person reads them: the rank and the suit's symbol (never the colour alone), and a name for
// screen readers ("queen of diamonds"). The API's codes are rank then suit: QD, TC, 7H.

import { el } from "./ui.js";

const SUITS = {
  C: { symbol: "♣", name: "clubs", red: false },
  D: { symbol: "♦", name: "diamonds", red: true },
  H: { symbol: "♥", name: "hearts", red: true },
  S: { symbol: "♠", name: "spades", red: false },
};
const RANKS = {
  A: ["A", "ace"], T: ["10", "10"], J: ["J", "jack"], Q: ["Q", "queen"], K: ["K", "king"],
};

export const PILE_NAMES = {
  N: "north", E: "east", S: "south", W: "west",
  NE: "north-east corner", SE: "south-east corner", SW: "south-west corner", NW: "north-west corner",
};
export const PILES = ["N", "E", "S", "W", "NE", "SE", "SW", "NW"];
export const SIDES = ["N", "E", "S", "W"];

function parts(code) {
  const rank = code.slice(0, -1);
  const suit = SUITS[code.slice(-1)];
  const [shown, spoken] = RANKS[rank] || [rank, rank];
  return { shown, spoken, suit };
}

export function cardName(code) {
  const { spoken, suit } = parts(code);
  return `${spoken} of ${suit.name}`;
}

// "7♥": the short written form, for sentences.
export function cardText(code) {
  const { shown, suit } = parts(code);
  return `${shown}${suit.symbol}`;
}

// The card's face: an element that screen readers read as its name.
export function cardFace(code, { label = true } = {}) {
  const { shown, suit } = parts(code);
  return el(
    "span",
    {
      class: suit.red ? "card red" : "card",
      role: label ? "img" : null,
      "aria-label": label ? cardName(code) : null,
      "aria-hidden": label ? null : "true",
      dataset: { card: code },
    },
    el("span", { class: "corner" }, el("span", { class: "rank" }, shown), el("span", { class: "suit" }, suit.symbol)),
    el("span", { class: "pip" }, suit.symbol),
  );
}

export function pileLabel(name, cards) {
  if (!cards.length) return `${PILE_NAMES[name]} pile, empty`;
  const top = cards[cards.length - 1];
  const under = cards.length > 1 ? `; ${cards.length} cards from the bottom: ${cards.map(cardName).join(", ")}` : "";
  return `${PILE_NAMES[name]} pile, top card ${cardName(top)}${under}`;
}

// A pile's cards, bottom first, the top one whole.
export function pileCards(cards) {
  if (!cards.length) return el("span", { class: "empty", "aria-hidden": "true" }, "empty");
  return el("span", { class: "cards", "aria-hidden": "true" }, cards.map((card) => cardFace(card, { label: false })));
}

// A move in words: "7♥ on N", "N onto NE", "end of turn".
export function moveText(move) {
  if (move.type === "play") return `${cardText(move.card)} on ${move.to}`;
  if (move.type === "move_pile") return `pile ${move.from} onto ${move.to}`;
  return "end the turn";
}

// The invitation's page (/play/join/{code}), the link a person is sent: who invites, the seats, the rules and
// the clock (GET invitations/{code}, which needs no token), and a Join button, which registers a name first
// when this browser has no player yet, then takes the seat (POST the invitation's `join`).

import { ApiError, get, post } from "./api.js";
import { currentToken, register, showWho, whoAmI } from "./identity.js";
import { byId, clockWords, el, rulesText, setTitle, targetText, tell, tellProblem } from "./ui.js";

const code = document.body.dataset.code;
let invitation = null;
let player = null;

function seatLine(seat) {
  let who;
  if (seat.kind === "computer") who = `${seat.name}, a computer (${seat.level})`;
  else if (seat.name) who = `${seat.name}${seat.you ? " (you)" : ""}`;
  else who = "free: for a person with the link";
  return el("li", { class: seat.name ? null : "free" }, `Seat ${seat.seat}: ${who}`);
}

function render() {
  byId("loading").hidden = true;
  byId("invitation").hidden = false;
  const people = invitation.seats.filter((seat) => seat.kind === "person").length;
  const computers = invitation.seats.length - people;
  const parts = [`${people} ${people === 1 ? "person" : "people"}`];
  if (computers) parts.push(`${computers} ${computers === 1 ? "computer" : "computers"}`);
  byId("join-title").textContent = `${invitation.inviter} invites you to a table`;
  setTitle(`${invitation.inviter} invites you`);
  byId("inviter").textContent = `${invitation.inviter} made a table for ${parts.join(" and ")}.`;
  byId("join-rules").textContent = rulesText(invitation.rules);
  byId("join-target").textContent = targetText(invitation.target_score);
  byId("join-clock").textContent = invitation.turn_seconds ? `${clockWords(invitation.turn_seconds)} a turn` : "none";
  byId("join-seats").replaceChildren(...invitation.seats.map(seatLine));
  const closed = byId("join-closed");
  const form = byId("join-form");
  if (invitation.game) {
    form.hidden = true;
    closed.hidden = false;
    closed.replaceChildren("You have a seat at this table. ", el("a", { href: `/play/games/${invitation.game}` }, "Open the table"));
    return;
  }
  if (invitation.status !== "waiting" || invitation.free_seats === 0) {
    form.hidden = true;
    closed.hidden = false;
    closed.textContent = invitation.status === "waiting" ? "Every seat is taken." : "This table has started without you: every seat is taken.";
    return;
  }
  closed.hidden = true;
  form.hidden = false;
  byId("join-name-field").hidden = Boolean(player);
  byId("join-name").required = !player;
  byId("join-button").textContent = player ? `Join as ${player.display_name}` : "Register and join";
}

async function read() {
  try {
    invitation = await get(`invitations/${encodeURIComponent(code)}`);
    render();
  } catch (error) {
    byId("loading").hidden = true;
    if (error instanceof ApiError && error.code === "invitation_not_found") {
      byId("join-missing").hidden = false;
      setTitle("Invitation not open");
    } else {
      tellProblem(error, "The invitation could not be read: ");
    }
  }
}

async function join(event) {
  event.preventDefault();
  const button = byId("join-button");
  button.setAttribute("aria-disabled", "true");
  try {
    if (!currentToken()) {
      player = await register(byId("join-name").value);
      showWho(player);
      tell(`Registered as ${player.display_name}. This browser keeps your token.`);
    }
    const game = await post(invitation.join);
    window.location.assign(`/play/games/${game.id}`);
  } catch (error) {
    tellProblem(error, "You were not seated: ");
    await read();
  } finally {
    button.setAttribute("aria-disabled", "false");
  }
}

async function main() {
  byId("join-form").addEventListener("submit", join);
  player = await whoAmI().catch(() => null);
  showWho(player);
  await read();
}

main();

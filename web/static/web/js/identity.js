// Who plays in this browser: the player's token, kept in localStorage (the API shows it once, at
// registration), and the player it names. Signing in on another device is pasting the token there.

import { ApiError, get, post } from "./api.js";

const TOKEN_KEY = "kingscorner.token";

export function currentToken() {
  try {
    return window.localStorage.getItem(TOKEN_KEY);
  } catch (error) {
    return null;
  }
}

// How far this browser read the person stream (person-feed.js): the token's player's own sequence, so it
// is forgotten with the token, and whenever another token is kept.
export const PERSON_FEED_POSITION_KEY = "kingscorner.person-stream.last-id";

export function keepToken(token) {
  const kept = token.trim();
  if (currentToken() !== kept) window.localStorage.removeItem(PERSON_FEED_POSITION_KEY);
  window.localStorage.setItem(TOKEN_KEY, kept);
}

export function forgetToken() {
  window.localStorage.removeItem(TOKEN_KEY);
  window.localStorage.removeItem(PERSON_FEED_POSITION_KEY);
}

// POST players: a new player, whose token this browser keeps from now on.
export async function register(name) {
  const player = await post("players", { name }, { token: null });
  keepToken(player.token);
  return player;
}

// The player the kept token names (GET players/me), or null without one. A token the API refuses
// (rotated elsewhere, or mistyped) is forgotten, so that the page offers to register or sign in again.
export async function whoAmI() {
  if (!currentToken()) return null;
  try {
    return await get("players/me");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      forgetToken();
      return null;
    }
    throw error;
  }
}

// The header's line naming who plays here.
export function showWho(player) {
  const who = document.getElementById("who");
  if (!who) return;
  who.textContent = player ? `Playing as ${player.display_name}` : "";
  who.hidden = !player;
}

// The person's stream: one feed of what concerns this player at every table and the daily deal
// (GET players/me/stream, docs/tables-and-streams.md): Server-Sent Events with the game stream's auth and
// resume rules. It is read with fetch and the Authorization header (which that contract allows
// for browsers), so it needs no ticket. Its events:
//   seat_taken, seat_left {game, seat, name}   at the player's tables
//   game_started {game}, game_over {game}
//   your_turn {game, seat, deadline}            at any table
//   rematch {game, new_game}
//   invitation_revoked {game}, seat_replaced {game, seat, by}
//   daily_deal, daily_revealed, daily_par, daily_closed {date}
// and `resync` (after a resume from an id whose events are no longer kept, or one never given), which says
// to read the state again: any type not listed here is taken as that. So is a reconnect.
// Without a stored id the stream starts with every event kept (up to 7 days): those that happened before
// this page first connected are history, passed with {history: true}, for state to be brought up to date
// without telling the person of them again. "Before" is by this device's clock, or by the server's (the
// response's Date) when the two differ by more than CLOCK_SLACK_MS.

import { currentToken, PERSON_FEED_POSITION_KEY } from "./identity.js";

const STREAM = "/api/v1/players/me/stream";
const LAST_ID_KEY = PERSON_FEED_POSITION_KEY;
export const PERSON_EVENTS = [
  "seat_taken", "seat_left", "game_started", "your_turn", "game_over", "rematch", "invitation_revoked",
  "seat_replaced", "daily_deal", "daily_revealed", "daily_par", "daily_closed",
];
const MAX_DELAY_MS = 30000;
const CLOCK_SLACK_MS = 2000;

export function forgetPersonFeedPosition() {
  window.localStorage.removeItem(LAST_ID_KEY);
}

// Follows the person's stream; returns {stop}. onEvent(type, event, {history}).
export function followPerson({ onEvent, onResync }) {
  const controller = new AbortController();
  let retryMs = 3000;
  // When this page first connected without a stored id (ms since the epoch): events before it are history.
  // Set by the first connection that is answered, not the first attempt: a page whose first try failed
  // (a network error, a refusal) and that connects on a retry still takes what came before as history.
  let historyBefore = null;

  function dispatch(type, data, id) {
    if (id) window.localStorage.setItem(LAST_ID_KEY, id);
    let event = {};
    try {
      event = data ? JSON.parse(data) : {};
    } catch (error) {
      event = {};
    }
    const at = Date.parse(event.at);
    const history = historyBefore !== null && Number.isFinite(at) && at < historyBefore;
    if (PERSON_EVENTS.includes(type)) onEvent(type, event, { history });
    else onResync(type);
  }

  async function read(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let fields = { event: "message", data: [], id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (fields.data.length) dispatch(fields.event, fields.data.join("\n"), fields.id);
          fields = { event: "message", data: [], id: null };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "event") fields.event = value;
        else if (name === "data") fields.data.push(value);
        else if (name === "id") fields.id = value;
        else if (name === "retry" && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  }

  async function connect(first) {
    const token = currentToken();
    if (!token || controller.signal.aborted) return;
    const headers = { Accept: "text/event-stream", Authorization: `Bearer ${token}` };
    const last = window.localStorage.getItem(LAST_ID_KEY);
    if (last) headers["Last-Event-ID"] = last;
    let delay = retryMs;
    try {
      const response = await fetch(STREAM, { headers, signal: controller.signal, cache: "no-store" });
      if (response.status === 401) return;
      if (response.ok) {
        if (historyBefore === null && !last) {
          // This device's clock, unless it is off from the server's (its Date, to the second) by more.
          const served = Date.parse(response.headers.get("Date") || "");
          const here = Date.now();
          historyBefore = Number.isFinite(served) && Math.abs(here - served) > CLOCK_SLACK_MS ? served : here;
        }
        if (!first) onResync("reconnected");
        await read(response);
      } else if (response.status === 429) {
        delay = 1000 * Number(response.headers.get("Retry-After") || 30);
      } else {
        delay = Math.min(MAX_DELAY_MS, retryMs * 2);
      }
    } catch (error) {
      if (controller.signal.aborted) return;
    }
    window.setTimeout(() => connect(false), Math.min(MAX_DELAY_MS, delay));
  }

  connect(true);
  return {
    stop() {
      controller.abort();
    },
  };
}

// A game's live feed: its Server-Sent Events stream (GET games/{id}/stream), read with EventSource and opened
// with a stream ticket (POST games/{id}/stream-tickets), since EventSource cannot send the token and a token
// never goes in a URL. EventSource reconnects by itself while the ticket is good; when it gives up (the ticket
// expired, the server answered an error), a new ticket reopens the stream after the last event id received,
// so nothing is missed or received twice, and the page reads the game again (`onReopen`).

import { ApiError, post } from "./api.js";

// The event types of a game's log (a named SSE event reaches only its listener), and `rematch`, which the
// live-play work sends on a finished game's stream.
const EVENT_TYPES = [
  "deal", "turn_start", "draw", "play", "move_pile", "end_turn", "hand_over", "game_over",
  "seat_taken", "seat_left", "seat_replaced", "game_started", "turn_timed_out", "rematch",
];
const MAX_DELAY_SECONDS = 30;

export class GameStream {
  constructor(gameId, { after = 0, onEvent, onReopen = () => {}, onEnd = () => {} }) {
    this.gameId = gameId;
    this.last = after;
    this.onEvent = onEvent;
    this.onReopen = onReopen;
    this.onEnd = onEnd;
    this.source = null;
    this.failures = 0;
    this.opened = 0;
    this.over = false;
    this.stopped = false;
    this.timer = null;
  }

  start() {
    this.open();
    return this;
  }

  stop() {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.source?.close();
  }

  async open() {
    if (this.stopped) return;
    let ticket;
    try {
      ticket = await post(`games/${this.gameId}/stream-tickets`);
    } catch (error) {
      // No seat any more (404), or the token is no longer valid (401): nothing to follow.
      if (error instanceof ApiError && (error.status === 404 || error.status === 401)) {
        this.stopped = true;
        this.onEnd(error);
        return;
      }
      this.retryLater();
      return;
    }
    const url = new URL(ticket.url, window.location.href);
    if (this.last) url.searchParams.set("last_event_id", String(this.last));
    const source = new EventSource(url);
    this.source = source;
    for (const type of EVENT_TYPES) source.addEventListener(type, (message) => this.receive(message));
    source.addEventListener("open", () => {
      this.failures = 0;
      this.opened += 1;
      if (this.opened > 1) this.onReopen();
    });
    source.addEventListener("error", () => {
      // CONNECTING: EventSource retries by itself. CLOSED: it gave up, for good.
      if (source.readyState !== EventSource.CLOSED || this.source !== source) return;
      if (this.over) {
        this.stopped = true;
        this.onEnd(null);
      } else {
        this.retryLater();
      }
    });
  }

  retryLater() {
    if (this.stopped) return;
    this.source?.close();
    this.failures += 1;
    const seconds = Math.min(MAX_DELAY_SECONDS, 2 ** Math.min(this.failures - 1, 5));
    this.timer = window.setTimeout(() => {
      this.opened = Math.max(this.opened, 1);
      this.open();
    }, seconds * 1000);
  }

  receive(message) {
    const seq = Number(message.lastEventId);
    if (seq && seq <= this.last) return;
    if (seq) this.last = seq;
    const event = JSON.parse(message.data);
    if (message.type === "game_over") this.over = true;
    this.onEvent(message.type, event);
  }
}

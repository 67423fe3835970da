// A Kings Corner client in TypeScript: every path, body and answer typed from the API's OpenAPI document
// (src/schema.d.ts, which `npm run generate` writes with openapi-typescript from the served document), every
// call made with openapi-fetch. It registers a player, plays a hand against three computer players and
// today's daily deal with the first legal move each time, and reads the player's standing.
//
// `npm ci && npm run generate && npm run check` (with the server running; KINGSCORNER_SCHEMA names another
// document) generates the types and type-checks this file under `tsc --strict`. The types are generated with
// `--default-non-nullable false`, which reads a member with a `default` as the document says: one a request
// may leave out (openapi-typescript 7 otherwise makes it required in request bodies too).

import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type GameView = components["schemas"]["GameView"];
type Problem = components["schemas"]["Problem"];
type Client = ReturnType<typeof createClient<paths>>;

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
}

/** The body of a 2xx answer, or the problem of any other (every refusal is one `Problem` shape). */
function body<T>(answer: { data?: T; error?: Problem }): T {
  if (answer.error !== undefined) {
    throw new ApiError(answer.error);
  }
  if (answer.data === undefined) {
    throw new Error("an answer with no body");
  }
  return answer.data;
}

export async function register(baseUrl: string, name: string): Promise<Client> {
  const anonymous = createClient<paths>({ baseUrl });
  const player = body(await anonymous.POST("/api/v1/players", { body: { name } }));
  console.log(`registered ${player.display_name}`);
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${player.token}` } });
}

/** Plays the game to the end of its hand: the first legal move each time, one request a move. */
export async function playThrough(client: Client, start: GameView): Promise<GameView> {
  let game = start;
  while (game.status === "playing") {
    const move = game.legal_moves[0] ?? { type: "end_turn" as const };
    game = body(
      await client.POST("/api/v1/games/{game_id}/moves", {
        params: { path: { game_id: game.id } },
        body: { moves: [move], expected_version: game.version },
      }),
    );
  }
  return game;
}

export async function playAGameAndTheDaily(baseUrl: string): Promise<void> {
  const client = await register(baseUrl, "TypeScript");
  const created = body(
    await client.POST("/api/v1/games", { body: { opponents: 3, level: "normal", target_score: null } }),
  );
  const game = await playThrough(client, created);
  console.log(`game ${game.id}: ${game.status}, winners ${JSON.stringify(game.winners)}`);

  const today = body(await client.GET("/api/v1/daily"));
  const attempt = body(
    await client.POST("/api/v1/daily/{day}/attempts", { params: { path: { day: today.date } } }),
  );
  await playThrough(client, attempt.game);
  const standing = body(
    await client.GET("/api/v1/daily/{day}/leaderboard/me", { params: { path: { day: today.date } } }),
  );
  console.log(`daily #${today.number}: ${standing.result}, rank ${standing.rank} of ${standing.count}`);
}

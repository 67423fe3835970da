// The API, over HTTP, as any third-party client calls it: JSON in and out, the player's token in the
// Authorization header (never in a URL), every refusal an ApiError carrying the problem's `code`.

import { currentToken } from "./identity.js";

export const API = "/api/v1/";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `The API answered ${status}.`);
    this.status = status;
    this.code = problem?.code || (status === 0 ? "network_error" : "unknown");
    this.problem = problem || {};
  }
}

// A path under /api/v1/ ("games/…"), or a whole URL the API gave (a `next` page, an invitation's `join`).
function address(path) {
  return /^https?:/.test(path) || path.startsWith("/") ? path : API + path;
}

export async function api(method, path, { body, token = currentToken(), headers = {} } = {}) {
  const sent = { Accept: "application/json", ...headers };
  if (token) sent.Authorization = `Bearer ${token}`;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(address(path), {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, { detail: "The server could not be reached: check your connection." });
  }
  const text = response.status === 204 ? "" : await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch (error) {
      data = null;
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return { status: response.status, data, headers: response.headers };
}

export const get = (path, options) => api("GET", path, options).then((answer) => answer.data);
export const post = (path, body, options = {}) => api("POST", path, { ...options, body }).then((answer) => answer.data);

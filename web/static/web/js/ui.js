// Small pieces every page uses: making elements, telling the person something, copying text, clocks.

// el("p", {class: "hint", text: "…"}, child, …): an element with attributes, text and children. Attributes
// are set as attributes (never inline style, which the pages' Content-Security-Policy refuses).
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "text") element.textContent = value;
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function byId(id) {
  return document.getElementById(id);
}

// A message in the page's polite live region, which screen readers announce; problems stay longer.
export function tell(message, { problem = false, seconds = problem ? 10 : 6, link = null } = {}) {
  const area = byId("notices");
  const notice = el("p", { class: problem ? "notice problem" : "notice" }, message);
  if (link) notice.append(" ", el("a", { href: link.href, text: link.text }));
  area.append(notice);
  window.setTimeout(() => notice.remove(), seconds * 1000);
  return notice;
}

// A refusal from the API, told in its own words (its `detail`), with its code for whoever reports it.
export function tellProblem(error, prefix = "") {
  const detail = error?.message || "Something went wrong.";
  tell(`${prefix}${detail}${error?.code ? ` (${error.code})` : ""}`, { problem: true });
}

// Copies the text of `source` (an input) when `button` is pressed, and says so.
export function copyButton(button, source, what) {
  button.addEventListener("click", async () => {
    const text = source.value;
    try {
      await navigator.clipboard.writeText(text);
    } catch (error) {
      source.select();
      document.execCommand("copy");
    }
    tell(`${what} copied.`);
  });
}

export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
}

// 75 -> "1:15"; 3725 -> "1:02:05".
export function clockText(seconds) {
  const whole = Math.max(0, Math.ceil(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

export function clockWords(seconds) {
  const whole = Math.max(0, Math.round(seconds));
  if (whole >= 86400 && whole % 86400 === 0) return plural(whole / 86400, "day");
  if (whole >= 3600 && whole % 3600 === 0) return plural(whole / 3600, "hour");
  if (whole >= 60 && whole % 60 === 0) return plural(whole / 60, "minute");
  return plural(whole, "second");
}

// Calls `tick` now and every second until the returned function is called.
export function everySecond(tick) {
  tick();
  const timer = window.setInterval(tick, 1000);
  return () => window.clearInterval(timer);
}

export function setTitle(text) {
  document.title = `${text} · Kings Corner`;
}

export function rulesText(rules) {
  return rules.preset === "custom" || !rules.preset ? "custom rules" : `${rules.preset} rules`;
}

export function targetText(target) {
  return target === null ? "a single hand" : `${target} points`;
}

// Navigation in the views (ui/navigation.py mounts this as a component with no body):
// the minimap jumps, the boundary and match steps, the matrix's span jumps, a click on a
// chunk that opens its detail (trigger `inspect`), text selected in a view made a span
// of a new check (trigger `span`), and synchronized scrolling. The views are plain HTML that Streamlit replaces on a rerun, so little is
// kept about them: the place they show (a redrawn view is put back there), and each
// place is found when it is needed by the offsets the views carry (`data-o` on each
// piece: its first character; `data-at` on a chunk's badge). A place on a page the
// views do not draw is asked of the server (trigger `jump`), which turns the page and
// sends it back as `data.target`.

const nav = (window.cbxNav ??= { installed: false, send: null, seq: null, anchors: new WeakMap() });
const VIEW = ".cbx-view[data-len]";
const ROOM = 8; // px above a line scrolled to the top: a span's label and a badge show whole
const MARKS = ".cbx-n, .cbx-hl, .cbx-r"; // a chunk's badge, a span's label, a rank

function views() {
  return [...document.querySelectorAll(`${VIEW} .cbx-doc`)];
}

function settled(doc) {
  return !doc.closest("[data-stale='true']");
}

function windowOf(doc) {
  const [low, high] = doc.closest(VIEW).dataset.window.split(" ").map(Number);
  return { low, high };
}

// Offsets are code points (as the core counts them); a text node counts UTF-16 units.
function unitsOf(text, points) {
  let units = 0;
  for (let seen = 0; seen < points && units < text.length; seen += 1) {
    units += text.codePointAt(units) > 0xffff ? 2 : 1;
  }
  return units;
}

function pointsOf(text, units) {
  return [...text.slice(0, units)].length;
}

function textNode(piece) {
  const walker = document.createTreeWalker(piece, NodeFilter.SHOW_TEXT);
  return walker.nextNode();
}

// The box of the character at `units` in a text node (a newline's box is empty: then
// the line box of the character before it, or of the piece).
function charBox(node, units) {
  const range = document.createRange();
  for (let at = units; at >= 0; at -= 1) {
    range.setStart(node, at);
    range.setEnd(node, Math.min(at + 1, node.length));
    const box = range.getClientRects()[0];
    if (box && box.height > 0) return box;
  }
  return node.parentElement.getClientRects()[0];
}

function contentTop(doc) {
  return doc.getBoundingClientRect().top + doc.clientTop;
}

// The offset of the first character of the first line a view shows whole.
function topOffset(doc) {
  const pieces = doc.querySelectorAll("[data-o]");
  if (!pieces.length) return null;
  const top = contentTop(doc) - 2;
  const lastTop = (element) => {
    const boxes = element.getClientRects();
    return boxes.length ? boxes[boxes.length - 1].top : -Infinity;
  };
  let low = 0;
  let high = pieces.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (lastTop(pieces[middle]) >= top) high = middle;
    else low = middle + 1;
  }
  const piece = pieces[low];
  const node = textNode(piece);
  let first = 0;
  let last = node ? node.length - 1 : 0;
  while (node && first < last) {
    const middle = (first + last) >> 1;
    if (charBox(node, middle).top >= top) last = middle;
    else first = middle + 1;
  }
  return Number(piece.dataset.o) + (node ? pointsOf(node.data, first) : 0);
}

// Scroll a view so the line of `offset` is the first it shows whole, with room above
// it for a span's label; false when the view does not draw it.
function align(doc, offset) {
  const pieces = [...doc.querySelectorAll("[data-o]")];
  const at = pieces.findLastIndex((piece) => Number(piece.dataset.o) <= offset);
  if (at < 0) return false;
  const piece = pieces[at];
  const node = textNode(piece);
  const units = node ? Math.min(unitsOf(node.data, offset - Number(piece.dataset.o)), node.length - 1) : 0;
  const box = node ? charBox(node, units) : piece.getClientRects()[0];
  if (!box) return false;
  // What is drawn just before a piece that starts at `offset` (its chunk's badge, the
  // labels of spans starting there) shows too: inline, it may sit at the end of the
  // line above when the line wraps there, or stand raised above this one.
  let top = box.top;
  if (Number(piece.dataset.o) === offset) {
    for (let mark = piece.previousElementSibling; mark?.matches(MARKS); mark = mark.previousElementSibling) {
      top = Math.min(top, mark.getBoundingClientRect().top);
    }
  }
  const before = doc.scrollTop;
  doc.scrollTop = before + (top - contentTop(doc) - ROOM);
  nav.anchors.set(doc, { offset, top: doc.scrollTop });
  if (doc.scrollTop !== before) nav.quiet.add(doc);
  return true;
}

function markHere() {
  for (const doc of views()) {
    const view = doc.closest(VIEW);
    const mark = view.querySelector(".cbx-mh");
    if (!mark) continue;
    const length = Math.max(Number(view.dataset.len), 1);
    const { low, high } = windowOf(doc);
    const span = (high - low) / Math.max(doc.scrollHeight, 1);
    mark.style.top = `${((low + doc.scrollTop * span) / length) * 100}%`;
    mark.style.height = `${((doc.clientHeight * span) / length) * 100}%`;
  }
  curvesHere();
}

// A semantic column's curve beside its view (explorer/view/curve.py): each mark moved
// level with the line of the view where its offset lies, the curve as tall as the
// view's text, and scrolled with it.
function placeCurve(doc, drawn) {
  const pieces = [...doc.querySelectorAll("[data-o]")];
  if (!pieces.length) return;
  const starts = pieces.map((piece) => Number(piece.dataset.o));
  // A line's place in the doc's scrolled content, as a place in the curve's (which
  // scrolls with it from its own top, a header's height below the doc's).
  const shift = doc.getBoundingClientRect().top + doc.clientTop - drawn.parentElement.getBoundingClientRect().top;
  const base = doc.getBoundingClientRect().top + doc.clientTop - doc.scrollTop - shift;
  for (const mark of drawn.querySelectorAll("[data-at]")) {
    const at = Number(mark.dataset.at);
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle] <= at) low = middle;
      else high = middle - 1;
    }
    const node = textNode(pieces[low]);
    const units = node ? Math.min(unitsOf(node.data, at - starts[low]), node.length - 1) : 0;
    const box = node ? charBox(node, units) : pieces[low].getClientRects()[0];
    if (box) mark.style.top = `${box.top - base + box.height / 2}px`;
  }
  drawn.style.height = `${doc.scrollHeight}px`;
  drawn.dataset.placed = "true";
}

function curvesHere() {
  for (const doc of views()) {
    const box = doc.parentElement.querySelector(".cbx-curve .cbx-cs");
    const drawn = box?.querySelector(".cbx-cc");
    if (!drawn) continue;
    if (!drawn.dataset.placed) placeCurve(doc, drawn);
    box.scrollTop = doc.scrollTop;
  }
}

// Every view shows the line of `offset` (in the document `source`, if named, else the
// one shown), or, if they draw another page or document, the server is asked.
function jump(offset, source) {
  const shown = views().filter(settled);
  if (!shown.length) return;
  const here = shown[0].closest(VIEW);
  const { low, high } = windowOf(shown[0]);
  const inside = low <= offset && (offset < high || offset === Number(here.dataset.len));
  if ((source !== undefined && source !== here.dataset.doc) || !inside) {
    ask(source === undefined ? { offset } : { offset, doc: source });
    return;
  }
  show(shown, offset);
}

// Ask the server for a place on a page the views do not draw; the view that asked
// leads when the answer comes.
function ask(request) {
  nav.asking = nav.lead;
  nav.send?.("jump", request);
}

// Scroll every view to `offset`, bring the leading view's text into the window (the
// first view's when none leads: views stacked on a narrow page are far apart), and keep
// the place.
function show(shown, offset) {
  shown.forEach((doc) => align(doc, offset));
  const lead = shown.find((doc) => doc.closest(VIEW).dataset.policy === nav.lead);
  (lead ?? shown[0]).scrollIntoView({ block: "nearest" });
  nav.place = { doc: shown[0].closest(VIEW).dataset.doc, offset };
  markHere();
}

function step(button) {
  const view = button.closest(VIEW);
  const doc = view.querySelector(".cbx-doc");
  if (!doc) return;
  const anchor = nav.anchors.get(doc);
  const from = anchor && anchor.top === doc.scrollTop ? anchor.offset : topOffset(doc);
  if (from === null) return;
  const direction = Number(button.dataset.step);
  // A match step goes from chunk to chunk that the flag filter matches: their badges
  // name their flags.
  const match = button.dataset.match === "1";
  const wanted = new Set((view.dataset.shown || "").split(" ").filter(Boolean));
  const starts = [...doc.querySelectorAll(".cbx-n[data-at]")]
    .filter((b) => !match || (b.dataset.flags || "").split(" ").some((f) => wanted.has(f)))
    .map((b) => Number(b.dataset.at));
  const found = direction > 0 ? starts.find((s) => s > from) : starts.findLast((s) => s < from);
  if (found === undefined) {
    const request = { offset: from, column: view.dataset.policy, step: direction };
    ask(match ? { ...request, match: true } : request);
  } else {
    const before = doc.scrollTop;
    jump(found);
    if (doc.scrollTop === before) reached(view, doc, found);
  }
}

// A step whose chunk start is already on screen and that cannot scroll the view (its end
// is shown) would look dead: mark the chunk it reached, and say where it is.
function reached(view, doc, offset) {
  doc.querySelectorAll(".cbx-reached").forEach((badge) => badge.classList.remove("cbx-reached"));
  const badge = doc.querySelector(`.cbx-n[data-at="${offset}"]`);
  if (!badge) return;
  badge.classList.add("cbx-reached");
  nav.anchors.set(doc, { offset, top: doc.scrollTop });
  let note = view.querySelector(".cbx-note-step");
  if (!note) {
    note = document.createElement("span");
    note.className = "cbx-note-step";
    note.setAttribute("role", "status");
    view.querySelector(".cbx-steps")?.after(note);
  }
  const rows = doc.getBoundingClientRect();
  const line = Math.round(badge.getBoundingClientRect().top - rows.top);
  note.textContent = `chunk ${badge.dataset.n} starts here, ${line} px down this view, marked in blue (the view cannot scroll further)`;
}

// A click on a chunk (its text or its badge) opens it in the chunk detail; a click that
// ends a text selection does not.
function inspect(target) {
  const piece = target.closest(`${VIEW} .cbx-doc .cbx-k[data-c], ${VIEW} .cbx-doc .cbx-n[data-n]`);
  if (!piece || !window.getSelection()?.isCollapsed) return false;
  const order = Number(piece.dataset.c ?? piece.dataset.n);
  // Kept until the detail's instance is in and the page is idle: a click sent while the
  // page's first run is still going is dropped by the server (a part's rerun then waits
  // for nothing), so the page's first click would be lost.
  nav.queued = { column: piece.closest(VIEW).dataset.policy, order };
  flush();
  return true;
}

function running() {
  return document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState === "running";
}

function flush() {
  if (!nav.queued || !nav.send || running()) return;
  const request = nav.queued;
  nav.queued = null;
  nav.send("inspect", request);
}

function onMapClick(map, event) {
  const box = map.getBoundingClientRect();
  const length = Number(map.dataset.len);
  let offset = Math.round(((event.clientY - box.top) / Math.max(box.height, 1)) * length);
  let nearest = 5; // px: a click this close to a tick lands on its chunk start
  for (const tick of map.querySelectorAll(".cbx-mt")) {
    const distance = Math.abs(tick.getBoundingClientRect().top - event.clientY);
    if (distance < nearest) {
      nearest = distance;
      offset = Number(tick.dataset.at);
    }
  }
  jump(Math.max(0, Math.min(offset, length)));
}

function follow(source) {
  const offset = topOffset(source);
  if (offset === null) return;
  for (const doc of views()) if (doc !== source) align(doc, offset);
  nav.place = { doc: source.closest(VIEW).dataset.doc, offset };
  markHere();
}

// A rerun that redraws a view (a slider step, a filter) starts it at its top: put it
// back at the place the views showed, if it draws that place of that document.
function restore() {
  for (const doc of views()) {
    if (nav.seen.has(doc)) continue;
    nav.seen.add(doc);
    const { low, high } = windowOf(doc);
    const place = nav.place;
    const same = place && place.doc === doc.closest(VIEW).dataset.doc;
    if (same && low <= place.offset && place.offset < high && doc.scrollTop === 0) {
      align(doc, place.offset);
    }
  }
  markHere();
}

// After the server turned the page, go to the target once every view draws it.
function land(target, deadline) {
  const shown = views();
  const ready =
    shown.length &&
    shown.every((doc) => {
      const view = doc.closest(VIEW);
      const { low, high } = windowOf(doc);
      return settled(doc) && view.dataset.doc === target.doc && low <= target.offset && target.offset <= high;
    });
  if (ready) {
    show(shown, target.offset);
  } else if (performance.now() < deadline) {
    setTimeout(() => land(target, deadline), 50);
  }
}

// Text selected in a view can become a span of the check being written: a button by the
// selection sends its offsets (code points of the document) as trigger `span`.
function selectedSpan() {
  const selection = window.getSelection();
  if (!selection || selection.isCollapsed || !selection.rangeCount) return null;
  const range = selection.getRangeAt(0);
  const offset = (node, units) => {
    const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    const piece = element?.closest("[data-o]");
    if (!piece || !piece.closest(`${VIEW} .cbx-doc`)) return null;
    const text = textNode(piece);
    return Number(piece.dataset.o) + (node === text ? pointsOf(text.data, units) : 0);
  };
  const start = offset(range.startContainer, range.startOffset);
  const end = offset(range.endContainer, range.endOffset);
  if (start === null || end === null || end <= start) return null;
  const view = range.startContainer.parentElement?.closest(VIEW);
  return view ? { doc: view.dataset.doc, start, end, box: range.getBoundingClientRect() } : null;
}

function offerSpan() {
  nav.offer?.remove();
  nav.offer = null;
  const span = selectedSpan();
  if (!span) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "cbx-makespan";
  button.textContent = `Make [${span.start}, ${span.end}) a span of the new check`;
  button.style.cssText =
    `position:fixed;z-index:1000050;left:${Math.max(span.box.left, 4)}px;` +
    `top:${Math.max(span.box.top - 30, 4)}px;font:600 12px/1.6 sans-serif;color:#fff;` +
    "background:#c2185b;border:0;border-radius:10px;padding:2px 10px;cursor:pointer";
  button.addEventListener("mousedown", (event) => event.preventDefault());
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    nav.send?.("span", { doc: span.doc, start: span.start, end: span.end });
    button.remove();
    nav.offer = null;
  });
  document.body.append(button);
  nav.offer = button;
}

function install() {
  nav.quiet = new WeakSet(); // views scrolled by this script: their next scroll is ours
  nav.seen = new WeakSet(); // views drawn before: a new one is a redrawn view
  nav.place = null; // { doc, offset }: where the views are
  let pending = null;
  let redraw = null;
  new MutationObserver(() => {
    redraw ??= requestAnimationFrame(() => {
      redraw = null;
      restore();
    });
  }).observe(document.body, { childList: true, subtree: true });
  // A click on a chunk that came before this script was in: the browser keeps where it
  // was as the (collapsed) selection.
  const selection = window.getSelection();
  const clicked = selection?.isCollapsed ? selection.anchorNode : null;
  const element = clicked instanceof Element ? clicked : clicked?.parentElement;
  if (element) inspect(element);
  const app = document.querySelector('[data-testid="stApp"]');
  if (app) new MutationObserver(flush).observe(app, { attributeFilter: ["data-test-script-state"] });
  document.addEventListener(
    "scroll",
    (event) => {
      const doc = event.target;
      if (!(doc instanceof Element) || !doc.matches(`${VIEW} .cbx-doc`)) return;
      if (nav.quiet.has(doc)) {
        nav.quiet.delete(doc);
        return;
      }
      if (pending === null) {
        pending = requestAnimationFrame(() => {
          pending = null;
          follow(doc);
        });
      }
    },
    true,
  );
  document.addEventListener("mouseup", () => setTimeout(offerSpan, 0));
  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const map = target?.closest(`${VIEW} .cbx-map`);
    const button = target?.closest(`${VIEW} .cbx-step`);
    const span = target?.closest(".cbx-jump[data-at]");
    // A minimap or a step leads with its own view; a span button with none.
    nav.lead = (map ?? button)?.closest(VIEW).dataset.policy ?? null;
    if (map) onMapClick(map, event);
    else if (button) step(button);
    else if (span) jump(Number(span.dataset.at), span.dataset.doc);
    else if (target) inspect(target);
  });
}

export default function (component) {
  if (!nav.installed) {
    nav.installed = true;
    install();
  }
  // The instance drawn above the views listens from the start and sends nothing; the
  // detail's instance sends, and sends a click that came before it.
  if (component.data?.early) return;
  nav.send = component.setTriggerValue;
  flush();
  const target = component.data?.target;
  if (target && target.seq !== nav.seq) {
    nav.seq = target.seq;
    nav.lead = nav.asking ?? null; // a target the page did not ask for (a button's): none
    nav.asking = null;
    land(target, performance.now() + 20000);
  }
}

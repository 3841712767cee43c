// ln2's panels on the web page: the boxes as rows × cols grids, one tube's record, the audit history with
// rollback. Everything here is drawn from GET /api/ln2/* and redrawn when the file changes. The page (the web front
// end's main.js) calls `mount` once its language is loaded. A rollback is staged like any write: its plan card (the
// chat's own) asks for approval, and only approving it applies it.

import { api, follow } from "/static/js/api.js";
import { planCard } from "/static/js/asks.js";
import { h } from "/static/js/dom.js";
import { formatTime, lang, t } from "/static/js/i18n.js";

const $ = (selector) => document.querySelector(selector);
const PERSON = "person"; // the agent a person's own staged write records (consulta.apps.PERSON)

// The page's hooks: `planApplied` after a plan of the chat was applied, `redraw` after a language switch.
export function mount({ onError, onNotice }) {
  const inventory = new Inventory({
    tabs: $("#box-tabs"),
    grid: $("#grid"),
    tube: $("#tube"),
    audit: $("#audit-list"),
    staged: $("#audit-plan"),
    onError,
    onNotice,
  });
  $("#audit-refresh").addEventListener("click", () => inventory.refreshAudit().catch(onError));
  window.addEventListener("focus", () => inventory.refresh().catch(() => {}));
  return {
    ready: Promise.all([inventory.refresh(), inventory.refreshAudit(), inventory.restoreStaged()]),
    planApplied() {
      inventory.refresh().catch(onError);
      inventory.refreshAudit().catch(onError);
    },
    event(event) {
      inventory.follow(event);
    },
    redraw() {
      inventory.draw();
      inventory.drawTube();
      inventory.drawAudit();
      inventory.drawStaged();
    },
  };
}

export class Inventory {
  constructor({ tabs, grid, tube, audit, staged, onError, onNotice }) {
    Object.assign(this, { tabs, grid, tube, audit, staged, onError, onNotice });
    this.view = null;
    this.box = 1;
    this.selected = null;
    this.changed = new Set();
    this.entries = [];
    this.proposal = null; // the rollback staged last: { run_id, plan_id, ask_id, previews, closed, decision }
    this.found = new Set(); // "box:position" of the tubes the conversation's last answer is about
    this.foundKind = "found"; // or "staged": the tubes a staged plan would change
  }

  // The chat's events mark what the answer is about: the tubes a look-up returned, or those a staged plan would take
  // out or fill. A new request clears the marks.
  follow(event) {
    if (event.type === "run_started" && !event.resumed) {
      this.mark(new Set(), "found");
      return;
    }
    if (event.type === "tool_returned" && event.ok) {
      this.mark(cellsOfRecords(event.result), "found");
    } else if (event.type === "plan_staged") {
      this.mark(this.cellsOfPlan(event.items || []), "staged");
    }
  }

  mark(cells, kind) {
    if (!cells.size && !(kind === "found" && this.found.size)) {
      return;
    }
    this.found = cells;
    this.foundKind = kind;
    const boxes = new Set([...cells].map((key) => Number(key.split(":")[0])));
    if (boxes.size && !boxes.has(this.box)) {
      this.box = Math.min(...boxes);
    }
    this.draw();
  }

  // The cells a staged plan's operations name: a new record's box and positions, or a record's positions.
  cellsOfPlan(items) {
    const cells = new Set();
    const ofRecord = (recordId, positions) => {
      for (const box of this.view?.boxes || []) {
        for (const cell of box.cells) {
          if (cell.record_id === recordId && (positions || []).includes(cell.position)) {
            cells.add(`${box.box}:${cell.position}`);
          }
        }
      }
    };
    for (const { op } of items) {
      if (!op) {
        continue;
      }
      if (op.op === "add_entry") {
        for (const position of op.positions || []) {
          cells.add(`${op.box}:${position}`);
        }
      } else if (op.op === "record_thaw") {
        ofRecord(op.record_id, op.positions);
      } else if (op.op === "batch_thaw") {
        for (const entry of op.entries || []) {
          ofRecord(entry.record_id, entry.positions);
        }
      }
    }
    return cells;
  }

  // Fetch the grid; cells whose record changed since the last fetch are marked until the next change.
  async refresh() {
    const before = this.view;
    const view = await api("GET", "/api/ln2/grid");
    if (before && before.sha256 !== view.sha256) {
      this.changed = changedCells(before, view);
      const first = [...this.changed][0];
      if (first) {
        const [box, position] = first.split(":").map(Number);
        this.box = box;
        if (this.selected && this.selected.box !== box) {
          this.selected = { box, position }; // the tube pane follows the change, not a tube of another box
        }
      }
      this.found = new Set(); // applied: the change's own marks take over
    }
    this.view = view;
    this.draw();
    if (this.selected) {
      await this.showTube(this.selected.box, this.selected.position);
    }
  }

  draw() {
    if (!this.view) {
      return;
    }
    this.drawTabs();
    const box = this.view.boxes.find((b) => b.box === this.box) || this.view.boxes[0];
    this.box = box.box;
    const columns = Array.from({ length: box.cols }, (_, i) => h("div", { class: "col-head", "aria-hidden": "true" }, String(i + 1)));
    const rows = [];
    for (let r = 0; r < box.rows; r += 1) {
      const cells = box.cells.slice(r * box.cols, (r + 1) * box.cols);
      const rowName = cells[0].label.slice(0, cells[0].label.length - 1);
      rows.push(h("div", { class: "row-head", "aria-hidden": "true" }, rowName));
      for (const cell of cells) {
        rows.push(this.cellButton(box.box, cell));
      }
    }
    const grid = h("div", { class: "grid", role: "group", "aria-label": t("ln2.web.grid.box", { box: box.box }) }, h("div", { class: "corner" }), columns, rows);
    grid.style.setProperty("--cols", box.cols);
    // One tab stop for the grid (the selected tube, else the first marked one, else the first cell); arrows move.
    const cells = [...grid.querySelectorAll(".cell")];
    const active = cells.find((c) => c.classList.contains("selected")) || cells.find((c) => c.classList.contains(this.foundKind)) || cells[0];
    for (const cell of cells) {
      cell.tabIndex = cell === active ? 0 : -1;
    }
    grid.addEventListener("keydown", (event) => moveInGrid(event, cells, box.cols));
    this.grid.replaceChildren(grid);
  }

  drawTabs() {
    const tabs = this.view.boxes.map((box) => {
      const used = box.cells.filter((c) => c.record_id !== null).length;
      return h(
        "button",
        {
          type: "button",
          role: "tab",
          class: "tab",
          "aria-selected": String(box.box === this.box),
          dataset: { box: String(box.box) },
          on: { click: () => this.selectBox(box.box) },
        },
        h("span", {}, t("ln2.web.grid.box", { box: box.box })),
        h("span", { class: "tab-count" }, t("ln2.web.grid.occupancy", { used, total: box.cells.length })),
      );
    });
    this.tabs.replaceChildren(...tabs);
  }

  selectBox(box) {
    this.box = box;
    this.draw();
  }

  cellButton(box, cell) {
    const occupied = cell.record_id !== null;
    const key = `${box}:${cell.position}`;
    const label = occupied ? t("ln2.web.grid.cell_occupied", { label: cell.label, name: cell.name || "" }) : t("ln2.web.grid.cell_empty", { label: cell.label });
    const isSelected = this.selected && this.selected.box === box && this.selected.position === cell.position;
    return h(
      "button",
      {
        type: "button",
        class: ["cell", occupied ? "occupied" : "empty", this.changed.has(key) && "changed", isSelected && "selected", this.found.has(key) && this.foundKind],
        title: label,
        "aria-label": label,
        "aria-pressed": String(Boolean(isSelected)),
        dataset: { box: String(box), pos: String(cell.position), label: cell.label },
        on: { click: () => this.showTube(box, cell.position) },
      },
      h("span", { class: "cell-name" }, occupied ? cell.name || `#${cell.record_id}` : ""),
    );
  }

  async showTube(box, position) {
    this.selected = { box, position };
    for (const cell of this.grid.querySelectorAll(".cell")) {
      const on = Number(cell.dataset.box) === box && Number(cell.dataset.pos) === position;
      cell.classList.toggle("selected", on);
      cell.setAttribute("aria-pressed", String(on));
    }
    try {
      this.tubeView = await api("GET", `/api/ln2/boxes/${box}/positions/${position}`);
    } catch (error) {
      this.onError(error);
      return;
    }
    this.drawTube();
  }

  drawTube() {
    const view = this.tubeView;
    if (!view) {
      return;
    }
    const cell = this.view?.boxes.find((b) => b.box === view.box)?.cells.find((c) => c.position === view.position);
    const where = t("ln2.web.tube.where", { box: view.box, label: cell ? cell.label : view.position });
    const body = view.record ? recordDetails(view.record) : [h("p", { class: "muted" }, t("ln2.web.tube.empty"))];
    this.tube.replaceChildren(h("h3", { id: "tube-title" }, t("ln2.web.tube.title")), h("p", { class: "tube-where" }, where), ...body);
  }

  async refreshAudit() {
    this.entries = await api("GET", "/api/ln2/audit?limit=50");
    this.drawAudit();
  }

  drawAudit() {
    if (!this.entries.length) {
      this.audit.replaceChildren(h("li", { class: "muted" }, t("ln2.web.audit.empty")));
      return;
    }
    this.audit.replaceChildren(
      ...this.entries.map((entry) =>
        h(
          "li",
          { class: "audit-entry", dataset: { auditId: entry.audit_id } },
          h(
            "div",
            { class: "audit-main" },
            h("p", { class: "audit-summary" }, summaryOf(entry)),
            h("p", { class: "audit-meta" }, t("ln2.web.audit.meta", { id: entry.audit_id, when: formatTime(entry.ts), actor: actor(entry.actor), op: opName(entry.op) })),
          ),
          h("button", { type: "button", class: ["ghost", "small"], on: { click: () => this.rollback(entry) } }, t("ln2.web.audit.rollback")),
        ),
      ),
    );
  }

  // Stage the rollback (nothing is written) and show it for approval.
  async rollback(entry) {
    let proposal;
    try {
      proposal = await api("POST", `/api/ln2/audit/${encodeURIComponent(entry.audit_id)}/rollback?lang=${encodeURIComponent(lang())}`);
    } catch (error) {
      this.onError(error);
      return;
    }
    this.showStaged(proposal);
    this.onNotice(t("ln2.web.audit.staged", { id: entry.audit_id }));
  }

  // A rollback this session staged and has not decided yet (the page was reloaded): shown again for approval.
  async restoreStaged() {
    const asks = await api("GET", "/api/asks");
    for (const ask of asks.filter((a) => a.kind === "plan").reverse()) {
      const run = await api("GET", `/api/runs/${encodeURIComponent(ask.run_id)}`);
      if (run.agent === PERSON) {
        const previews = ask.payload.items.map((item) => item.preview);
        this.showStaged({ run_id: run.id, plan_id: ask.payload.plan_id, ask_id: ask.id, previews });
        return;
      }
    }
  }

  // The staged rollback's plan card (the chat's own), followed until its plan is decided: approving applies it (the
  // grid and the history redraw); rejecting it, or letting it time out, changes nothing.
  showStaged(proposal) {
    this.proposal = { ...proposal, closed: false, decision: null };
    this.drawStaged();
    this.staged.firstElementChild?.scrollIntoView({ block: "nearest" });
    follow(proposal.run_id, {
      onEvent: (event) => {
        if (this.proposal?.ask_id !== proposal.ask_id) {
          return; // another rollback was staged since
        }
        if (event.type === "ask_closed" && event.ask_id === proposal.ask_id) {
          this.proposal.closed = true;
          this.drawStaged();
        } else if (event.type === "plan_decided" && event.plan_id === proposal.plan_id) {
          this.proposal.decision = event;
          this.drawStaged();
          Promise.all([this.refresh(), this.refreshAudit()]).catch(this.onError);
        }
      },
    });
  }

  // Draw the staged rollback's card as it stands, in the page's language.
  drawStaged() {
    const proposal = this.proposal;
    if (!proposal) {
      return;
    }
    const card = planCard(proposal.plan_id, proposal.previews.map((preview) => ({ preview })), { onError: this.onError });
    card.querySelector(".muted").textContent = t("ln2.web.audit.staged_intro"); // staged by the person, not the agent
    if (proposal.decision) {
      card.decided(proposal.decision);
    } else if (!proposal.closed) {
      card.open(proposal.ask_id);
    }
    this.staged.replaceChildren(card);
  }
}

// The tubes a look-up returned: its records, one line each ("id 7: HeLa; box 3 positions 4,5; frozen …").
function cellsOfRecords(result) {
  const cells = new Set();
  for (const line of (result && Array.isArray(result.records) && result.records) || []) {
    const match = typeof line === "string" && /\bbox (\d+) positions ([\d,]+)/.exec(line);
    if (match) {
      for (const position of match[2].split(",")) {
        cells.add(`${match[1]}:${position}`);
      }
    }
  }
  return cells;
}

// Arrow keys, Home and End move the focus within the grid, row by row (the grid is one tab stop).
function moveInGrid(event, cells, cols) {
  const at = cells.indexOf(document.activeElement);
  if (at < 0) {
    return;
  }
  const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -cols, ArrowDown: cols }[event.key];
  let next = step === undefined ? null : at + step;
  if (event.key === "Home") {
    next = 0;
  } else if (event.key === "End") {
    next = cells.length - 1;
  }
  if (next === null || next < 0 || next >= cells.length) {
    return;
  }
  event.preventDefault();
  cells[at].tabIndex = -1;
  cells[next].tabIndex = 0;
  cells[next].focus();
}

function changedCells(before, after) {
  const held = new Map();
  for (const box of before.boxes) {
    for (const cell of box.cells) {
      held.set(`${box.box}:${cell.position}`, cell.record_id);
    }
  }
  const changed = new Set();
  for (const box of after.boxes) {
    for (const cell of box.cells) {
      const key = `${box.box}:${cell.position}`;
      if (held.get(key) !== cell.record_id) {
        changed.add(key);
      }
    }
  }
  return changed;
}

const FIELDS = [
  ["id", "ln2.web.tube.field.id"],
  ["parent_cell_line", "ln2.web.tube.field.cell_line"],
  ["short_name", "ln2.web.tube.field.short_name"],
  ["plasmid_name", "ln2.web.tube.field.plasmid_name"],
  ["plasmid_id", "ln2.web.tube.field.plasmid_id"],
  ["box", "ln2.web.tube.field.box"],
  ["positions", "ln2.web.tube.field.positions"],
  ["frozen_at", "ln2.web.tube.field.frozen_at"],
  ["note", "ln2.web.tube.field.note"],
];

function recordDetails(record) {
  const rows = FIELDS.filter(([name]) => record[name] !== null && record[name] !== undefined && record[name] !== "").map(([name, key]) => [
    h("dt", {}, t(key)),
    h("dd", {}, Array.isArray(record[name]) ? record[name].join(t("web.list_separator")) : String(record[name])),
  ]);
  const events = record.thaw_events || [];
  return [
    h("dl", { class: "record" }, rows),
    events.length ? h("h4", {}, t("ln2.web.tube.thaw_events")) : null,
    events.length
      ? h(
          "ul",
          { class: "thaws" },
          events.map((event) => h("li", {}, t("ln2.web.tube.thaw_event", { date: event.date, action: opName(event.action), positions: (event.positions || []).join(t("web.list_separator")) }))),
        )
      : null,
  ].filter(Boolean);
}

const OPS = {
  add_entry: "ln2.web.op.add_entry",
  record_thaw: "ln2.web.op.record_thaw",
  batch_thaw: "ln2.web.op.batch_thaw",
  rollback: "ln2.web.op.rollback",
  thaw: "ln2.web.op.thaw",
  takeout: "ln2.web.op.takeout",
  discard: "ln2.web.op.discard",
};

function opName(op) {
  return OPS[op] ? t(OPS[op]) : op;
}

function actor(name) {
  if (name === "local") {
    return t("ln2.web.audit.actor_local");
  }
  if (name && name.startsWith("web:")) {
    return t("ln2.web.audit.actor_web", { id: name.slice(4, 10) });
  }
  return name;
}

// An audit entry's summary in the page's language when the entry has it (older entries are English only).
function summaryOf(entry) {
  return (entry.translations || {})[lang()] || entry.summary;
}

// The web page of `wh40k serve`: plain JavaScript over the JSON API (no build step).
"use strict";

const STAGES = ["attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed"];
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
let standardProfiles = {};

function showError(message) { $("error").textContent = message || ""; }

async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

// P(at least k) for k = 0..n-1 from P(exactly k).
function atLeast(pmf) {
  const out = new Array(pmf.length);
  let tail = 0;
  for (let k = pmf.length - 1; k >= 0; k--) { tail += pmf[k]; out[k] = Math.min(1, tail); }
  return out;
}

// The smallest k with P(X <= k) >= q (as the engine's Distribution.percentile).
function percentile(pmf, q) {
  let cdf = 0;
  for (let k = 0; k < pmf.length; k++) { cdf += pmf[k]; if (cdf >= q - 1e-12) return k; }
  return pmf.length - 1;
}

// ---- finding a unit as you type -----------------------------------------------------------

function picker(inputId, listId, chosenId, withProfiles) {
  const input = $(inputId), list = $(listId), chosen = $(chosenId);
  let timer = null, asked = 0;
  input.dataset.value = "";
  const choose = (value, label) => {
    input.dataset.value = value;
    input.value = label;
    chosen.textContent = value === label ? "" : value;
    list.hidden = true;
  };
  const offer = (items) => {
    list.innerHTML = "";
    for (const item of items) {
      const li = document.createElement("li");
      li.textContent = item.label;
      li.dataset.value = item.value;
      li.addEventListener("mousedown", (e) => { e.preventDefault(); choose(item.value, item.text); });
      list.appendChild(li);
    }
    list.hidden = items.length === 0;
  };
  input.addEventListener("input", () => {
    input.dataset.value = input.value.trim();
    chosen.textContent = "";
    clearTimeout(timer);
    const text = input.value.trim();
    timer = setTimeout(async () => {
      const mine = ++asked;
      const items = [];
      if (withProfiles) {
        if (/(^|\s)T\d+(\s|$)/i.test(text)) items.push({value: text, text, label: `inline profile: ${text}`});
        for (const [name, profile] of Object.entries(standardProfiles)) {
          if (!text || name.toLowerCase().startsWith(text.toLowerCase())) {
            items.push({value: name, text: name, label: `${name}: ${profile}`});
          }
        }
      }
      if (text.length >= 2) {
        try {
          const found = await api(`api/units?every_edition=true&limit=30&name=${encodeURIComponent(text)}`);
          for (const u of found.units) {
            items.push({value: u.datasheet_id, text: u.name,
                        label: `${u.name} (edition ${u.edition}${u.game_mode ? ", " + u.game_mode : ""}, ${u.faction_id || "no faction"})`});
          }
        } catch (e) { showError(e.message); }
      }
      if (mine === asked) offer(items);
    }, 150);
  });
  input.addEventListener("blur", () => { list.hidden = true; });
}

// ---- charts ---------------------------------------------------------------------------------

// Bars of P(exactly k) and a line of P(at least k), with a table of the same numbers.
function chart(containerId, title, pmf) {
  const box = $(containerId);
  box.innerHTML = "";
  let last = pmf.length - 1;
  const tail = atLeast(pmf);
  while (last > 0 && tail[last] < 1e-6) last--;
  const ks = [...Array(last + 1).keys()];
  const width = 460, height = 220, left = 40, bottom = 30, top = 24;
  const step = (width - left - 10) / ks.length;
  const y = (p) => top + (height - top - bottom) * (1 - p);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", title);
  const add = (name, attrs, text) => {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.appendChild(el);
    return el;
  };
  add("text", {x: left, y: 14, "font-weight": "bold"}, `${title}: P(exactly k) bars, P(at least k) line`);
  for (const p of [0, 0.5, 1]) {
    add("line", {x1: left, x2: width - 10, y1: y(p), y2: y(p), stroke: "#ddd"});
    add("text", {x: 4, y: y(p) + 4}, p.toFixed(1));
  }
  const points = [];
  for (const k of ks) {
    const x = left + k * step;
    const bar = add("rect", {class: "bar-exact", x: x + step * 0.1, y: y(pmf[k]), width: step * 0.8,
                             height: y(0) - y(pmf[k]), fill: "#4a72c4", "data-k": k, "data-p": pmf[k]});
    const tip = document.createElementNS(SVG, "title");
    tip.textContent = `k = ${k}: P(exactly) ${pmf[k].toFixed(4)}, P(at least) ${tail[k].toFixed(4)}`;
    bar.appendChild(tip);
    if (ks.length <= 40 || k % Math.ceil(ks.length / 20) === 0) {
      add("text", {x: x + step * 0.5, y: height - bottom + 14, "text-anchor": "middle"}, String(k));
    }
    points.push(`${x + step * 0.5},${y(tail[k])}`);
  }
  add("polyline", {class: "line-at-least", points: points.join(" "), fill: "none", stroke: "#d0612a",
                   "stroke-width": 2});
  box.appendChild(svg);
  const table = document.createElement("table");
  table.id = `table-${containerId.replace("chart-", "")}`;
  table.innerHTML = "<thead><tr><th>k</th><th>P(exactly k)</th><th>P(at least k)</th></tr></thead>";
  const body = document.createElement("tbody");
  for (const k of ks) {
    const row = document.createElement("tr");
    cell(row, String(k));
    cell(row, pmf[k].toFixed(4));
    cell(row, tail[k].toFixed(4));
    body.appendChild(row);
  }
  table.appendChild(body);
  box.appendChild(table);
}

// ---- the attack -----------------------------------------------------------------------------

function number(id) {
  const v = $(id).value.trim();
  return v === "" ? null : Number(v);
}

function requestBody() {
  const body = {
    attacker: $("attacker").dataset.value || $("attacker").value.trim(),
    target: $("target").dataset.value || $("target").value.trim(),
    phase: $("phase").value,
    weapons: $("weapons").value.split(",").map((w) => w.trim()).filter(Boolean),
  };
  for (const id of ["half_range", "stationary", "charged", "cover", "overwatch", "damaged", "indirect", "spotted",
                    "close_quarters"]) body[id] = $(id).checked;
  for (const id of ["reroll_hits", "reroll_wounds", "damage_reduction"]) if ($(id).value) body[id] = $(id).value;
  for (const id of ["models", "target_models", "feel_no_pain", "hit_modifier", "wound_modifier", "critical_hit_on"]) {
    const v = number(id);
    if (v !== null) body[id] = v;
  }
  if ($("edition").value) body.edition = Number($("edition").value);
  return body;
}

function render(answer) {
  const t = answer.target;
  $("summary").textContent = `${answer.attacker} attacks ${t.name} (T${t.toughness} ` +
    `${t.save ? "Sv" + t.save + "+" : "Sv-"} W${t.wounds} x${t.models}` +
    `${t.invulnerable_save ? " inv" + t.invulnerable_save + "+" : ""}${t.feel_no_pain ? " fnp" + t.feel_no_pain + "+" : ""})`;
  const fired = $("weapons-fired");
  fired.innerHTML = "";
  for (const w of answer.weapons) {
    const li = document.createElement("li");
    li.textContent = `${w.models} x ${w.name}: A ${w.attacks}, skill ${w.skill ? w.skill + "+" : "N/A"}, ` +
      `S ${w.strength}, AP ${w.armour_penetration}, D ${w.damage}`;
    fired.appendChild(li);
  }
  chart("chart-models_destroyed", "Models destroyed", answer.models_destroyed.pmf);
  chart("chart-damage", "Damage", answer.damage.pmf);
  const stages = $("stages").tBodies[0];
  stages.innerHTML = "";
  for (const name of STAGES) {
    const d = answer[name], row = document.createElement("tr");
    row.dataset.stage = name;
    let max = 0;
    d.pmf.forEach((p, k) => { if (p > 1e-12) max = k; });
    cell(row, name, "text");
    cell(row, d.mean.toFixed(4));
    cell(row, String(percentile(d.pmf, 0.1)));
    cell(row, String(percentile(d.pmf, 0.5)));
    cell(row, String(percentile(d.pmf, 0.9)));
    cell(row, String(max));
    stages.appendChild(row);
  }
  $("destroyed").textContent = `P(target unit destroyed) = ${answer.target_destroyed.toFixed(4)}`;
  const notes = $("notes");
  notes.innerHTML = "";
  for (const line of [...answer.input_notes, ...Object.entries(answer.choices).map(([k, v]) => `choice: ${k}: ${JSON.stringify(v)}`)]) {
    const li = document.createElement("li");
    li.textContent = line;
    notes.appendChild(li);
  }
  const steps = $("explain").tBodies[0];
  steps.innerHTML = "";
  for (const e of answer.explain) {
    const row = document.createElement("tr");
    cell(row, e.title || e.rule_key, "text");
    cell(row, `${e.edition}e${e.section ? " " + e.section : ""}`, "text");
    cell(row, e.source_id ? `${e.source_id}, ${e.locator}` : (e.note ? `(no matched-play wording; ${e.note})` : "(wording not in the database)"), "text");
    cell(row, e.summary, "text");
    steps.appendChild(row);
  }
  $("result").hidden = false;
}

async function resolve() {
  showError("");
  $("resolve").disabled = true;
  try {
    render(await api("api/attack", {method: "POST", headers: {"content-type": "application/json"},
                                    body: JSON.stringify(requestBody())}));
  } catch (e) {
    showError(e.message);
  } finally {
    $("resolve").disabled = false;
  }
}

// ---- a rule by name -------------------------------------------------------------------------

async function lookUpRule() {
  showError("");
  const params = new URLSearchParams({name: $("rule-name").value.trim()});
  if ($("rule-edition").value) params.set("edition", $("rule-edition").value);
  try {
    const r = await api(`api/rule?${params}`);
    $("rule-title").textContent = `${r.section ? r.section + " " : ""}${r.title}`;
    $("rule-where").textContent = `edition ${r.edition}, ${r.game_mode} games, source ${r.source_id}, ${r.locator}` +
      (r.note ? ` (note: ${r.note})` : "") + (r.notes.length ? ` (${r.notes.join("; ")})` : "");
    $("rule-text").textContent = r.text;
    const chain = $("rule-chain").tBodies[0];
    chain.innerHTML = "";
    for (const s of r.chain) {
      const row = document.createElement("tr");
      for (const v of [s.source_id, s.kind, s.game_mode || "all modes", s.effective_date || "undated", s.verdict]) cell(row, v, "text");
      chain.appendChild(row);
    }
    $("rule-result").hidden = false;
  } catch (e) {
    showError(e.message);
  }
}

async function start() {
  picker("attacker", "attacker-list", "attacker-chosen", false);
  picker("target", "target-list", "target-chosen", true);
  $("resolve").addEventListener("click", resolve);
  $("rule-go").addEventListener("click", lookUpRule);
  $("rule-name").addEventListener("keydown", (e) => { if (e.key === "Enter") lookUpRule(); });
  try {
    const info = await api("api/info");
    standardProfiles = info.standard_profiles;
    $("info").textContent = `database ${info.database}: editions ${info.editions.join(", ")} (latest ${info.latest_edition})`;
  } catch (e) {
    showError(e.message);
  }
}

start();

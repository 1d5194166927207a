// The agent card panel: the card as fetched, and the findings of its check
// (bridge/inspector/cardcheck.py). Uses app.js's helpers.
"use strict";

async function connect() {
  showError(null);
  const answer = await api("card", body("", {}));
  if (answer.error) { showError(answer.error); $("card-findings").replaceChildren(); return; }
  showFindings(answer.findings || []);
  const card = answer.card;
  $("card-name").textContent = card.name || "(no name)";
  $("card-version").textContent = card.version ? `v${card.version}` : "";
  $("card-desc").textContent = card.description || "";
  $("card-signature").textContent = answer.signatures
    ? `signed (${answer.signatures} signature${answer.signatures > 1 ? "s" : ""})` : "not signed";
  const caps = card.capabilities || {};
  $("capabilities").replaceChildren(...["streaming", "pushNotifications", "extendedAgentCard"]
    .map((k) => el("li", { textContent: `${k}: ${caps[k] ? "yes" : "no"}` })),
    ...(caps.extensions || []).map((x) => el("li", { textContent: `extension ${x.uri}` })));
  $("interfaces").replaceChildren(...(card.supportedInterfaces || []).map((i) =>
    el("li", { textContent: `${i.protocolBinding} ${i.url}` })));
  $("skills").replaceChildren(...(card.skills || []).map((s) => el("li", {},
    el("strong", { textContent: s.name }), ` — ${s.description || ""} `,
    ...(s.examples || []).map((x) => el("button", {
      className: "example", textContent: x, onclick: () => { $("text").value = x; } })))));
  await listTasks();
}

function showFindings(findings) {
  $("card-findings").replaceChildren(...(findings.length ? findings.map((f) =>
    el("li", { className: "finding", dataset: { level: f.level } },
       el("strong", { textContent: f.level }), " ",
       f.where ? el("code", { textContent: f.where }) : "", f.where ? " " : "", f.message))
    : [el("li", { className: "ok", textContent: "no findings: a sound A2A 1.0 card" })]));
}

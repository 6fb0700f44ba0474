// The dashboard's one stylesheet and one script, served by railyard itself from
// /dashboard/assets: no CDN, no fonts to fetch, no framework, no build step. Kept as strings so
// `tsc` ships them in dist/ with the rest of the code.

export const DASHBOARD_CSS = `
:root {
  --ink: #14213d; --muted: #5b6478; --line: #d9dee8; --bg: #f3f5f9; --card: #ffffff;
  --brand: #0b6e4f; --brand-dark: #08523b; --focus: #f4b400; --bad: #b3261e; --bad-bg: #fdecea;
  --good: #0b6e4f; --good-bg: #e6f4ee; --wait: #8a5a00; --wait-bg: #fff4d6; --live: #c62828;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg); font-size: 15px;
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; }
body.mode-live { border: 6px solid var(--live); }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 12px; top: 12px; z-index: 10; background: #fff; padding: 8px 12px; }
.live-banner { background: var(--live); color: #fff; padding: 10px 24px; font-size: 1rem; letter-spacing: .02em; }
.live-banner strong { font-size: 1.1rem; margin-right: 6px; }
.test-banner { background: var(--wait-bg); color: var(--wait); padding: 6px 24px; font-size: .85rem; }
header { display: flex; align-items: center; justify-content: space-between; gap: 16px; padding: 14px 24px; background: var(--ink); color: #fff; flex-wrap: wrap; }
.brand { color: #fff; text-decoration: none; font-weight: 800; font-size: 1.15rem; }
.brand span { font-weight: 400; opacity: .75; }
.account { display: flex; align-items: center; gap: 14px; flex-wrap: wrap; }
.switch { display: flex; align-items: center; gap: 8px; margin: 0; }
.switch-label { font-size: .8rem; opacity: .8; }
.switch [role=group] { display: inline-flex; border: 1px solid rgba(255,255,255,.5); border-radius: 999px; overflow: hidden; }
.switch button { background: transparent; color: #fff; border: 0; border-radius: 0; padding: 6px 14px; width: auto; font-size: .85rem; }
.switch button[aria-pressed=true] { background: #fff; color: var(--ink); }
.switch button.live-button[aria-pressed=true] { background: var(--live); color: #fff; }
.key-hint { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; opacity: .85; }
button.link { background: none; border: 0; color: #fff; text-decoration: underline; padding: 0; width: auto; font-weight: 400; }
nav[aria-label=Dashboard] { background: #fff; border-bottom: 1px solid var(--line); padding: 0 24px; }
nav ul { list-style: none; margin: 0; padding: 0; display: flex; gap: 4px; flex-wrap: wrap; }
nav a { display: block; padding: 12px 12px; color: var(--ink); text-decoration: none; border-bottom: 3px solid transparent; font-weight: 600; }
nav a[aria-current=page] { border-bottom-color: var(--brand); color: var(--brand-dark); }
body.mode-live nav a[aria-current=page] { border-bottom-color: var(--live); color: var(--live); }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 48px; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin: 4px 0 16px; }
h2 { font-size: 1.1rem; margin: 0 0 12px; }
h3 { font-size: 1rem; margin: 14px 0 8px; }
a { color: var(--brand-dark); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 18px 20px; margin-bottom: 16px; box-shadow: 0 2px 10px rgba(20,33,61,.05); }
.card.narrow { max-width: 480px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap: 16px; }
.grid .card { margin-bottom: 0; }
.grid + .card, .grid + section { margin-top: 16px; }
.lead { font-size: 1.05rem; }
.muted { color: var(--muted); }
.field { margin-bottom: 12px; }
label, legend { display: block; font-weight: 600; font-size: .9rem; margin-bottom: 6px; }
label.radio, label.check { display: inline-flex; gap: 6px; align-items: center; font-weight: 400; margin-right: 14px; }
fieldset { border: 0; padding: 0; margin: 0 0 12px; }
input, select, textarea { width: 100%; padding: 9px 10px; font-size: .95rem; border: 1.5px solid var(--line); border-radius: 8px; color: var(--ink); background: #fff; font-family: inherit; }
input[type=radio], input[type=checkbox] { width: auto; }
.hint { margin: 4px 0 0; font-size: .82rem; color: var(--muted); }
form .hint + button, form .hint + .field { margin-top: 12px; }
.hint.warn { color: var(--wait); }
.scenario-warnings { margin: 0 0 10px; padding-left: 18px; }
button { padding: 10px 16px; font-size: .95rem; font-weight: 700; color: #fff; background: var(--brand); border: 0; border-radius: 8px; cursor: pointer; }
button:hover { background: var(--brand-dark); }
button.small { padding: 6px 12px; font-size: .85rem; }
button.danger { background: var(--bad); }
a:focus-visible, input:focus-visible, select:focus-visible, button:focus-visible, summary:focus-visible, textarea:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.flash:focus { outline: 2px solid currentColor; outline-offset: 2px; }
form.inline { display: inline-block; margin: 0 4px 4px 0; }
.filters { display: flex; gap: 12px; align-items: flex-end; flex-wrap: wrap; margin-bottom: 12px; }
.filters .field { margin-bottom: 0; min-width: 160px; }
.flash { padding: 10px 14px; border-radius: 8px; margin: 0 0 16px; line-height: 1.45; }
.flash:empty { display: none; }
.flash.ok { background: var(--good-bg); color: var(--good); }
.flash.error { background: var(--bad-bg); color: var(--bad); }
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; font-size: .88rem; }
th, td { text-align: left; padding: 7px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
table.compact { width: auto; margin-top: 8px; }
td > code:only-child { white-space: nowrap; }
.nowrap { white-space: nowrap; }
.small { font-size: .8rem; }
code.request-line { word-break: break-all; }
code.clip { display: inline-block; max-width: 140px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .84rem; }
pre { background: #f6f8fb; border: 1px solid var(--line); border-radius: 8px; padding: 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
.badge { display: inline-block; padding: 2px 8px; border-radius: 999px; font-size: .78rem; font-weight: 700; background: #eef1f6; color: var(--ink); }
.badge.good { background: var(--good-bg); color: var(--good); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.wait { background: var(--wait-bg); color: var(--wait); }
.balances { display: flex; gap: 32px; flex-wrap: wrap; }
.balance span { display: block; color: var(--muted); font-size: .85rem; }
.balance strong { font-size: 1.8rem; font-variant-numeric: tabular-nums; }
.balance small { display: block; color: var(--muted); }
.maps { margin: 10px 0 0; font-family: ui-monospace, monospace; font-size: .78rem; color: var(--muted); }
.ladder { list-style: none; padding: 0; margin: 0; display: grid; gap: 12px; }
.step { border: 1.5px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.step.done { border-color: var(--good); background: #f7fcf9; }
.step.next { border-color: var(--focus); background: #fffcf0; }
.step-head { display: flex; align-items: center; gap: 10px; }
.step-head h3 { margin: 0; }
.step-no { display: inline-flex; width: 26px; height: 26px; border-radius: 50%; align-items: center; justify-content: center; background: var(--line); font-weight: 700; }
.step.done .step-no { background: var(--good); color: #fff; }
.unlocks { margin: 6px 0 2px; }
.unlock-list { margin: 0 0 8px; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px 16px; margin: 0 0 10px; }
.facts dt { color: var(--muted); font-size: .8rem; }
.facts dd { margin: 2px 0 0; font-weight: 600; }
.timeline { list-style: none; margin: 0; padding: 0 0 0 18px; border-left: 3px solid var(--line); }
.entry { position: relative; padding: 6px 0 10px 10px; }
.entry::before { content: ""; position: absolute; left: -27px; top: 10px; width: 14px; height: 14px; border-radius: 50%; background: #fff; border: 3px solid var(--line); }
.entry.kind-failover::before, .entry.kind-timeout::before, .entry.kind-late_success_reversed::before { border-color: var(--bad); }
.entry.kind-callback::before, .entry.kind-journal::before { border-color: var(--good); }
.entry.kind-provider_call::before, .entry.kind-request::before { border-color: var(--brand); }
.entry.kind-mock_call::before, .entry.kind-poll::before { border-color: #7a8599; }
.entry.kind-event::before, .entry.kind-delivery::before, .entry.kind-delivery_attempt::before { border-color: #3d5a98; }
.entry details summary { font-weight: 400; font-size: .8rem; color: var(--muted); }
.entry-head { font-size: .8rem; color: var(--muted); }
.entry-head .kind { display: inline-block; margin-left: 6px; text-transform: uppercase; letter-spacing: .04em; font-weight: 700; color: var(--ink); }
.entry.kind-failover .kind, .entry.kind-timeout .kind { color: var(--bad); }
.entry-title { margin: 2px 0; }
.entry-facts { margin: 2px 0 4px; font-size: .85rem; color: var(--muted); }
table.postings { margin: 4px 0 6px; font-size: .82rem; }
table.postings td, table.postings th { padding: 3px 10px 3px 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.deliveries { list-style: none; padding: 0; margin: 0; }
.delivery { border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px; margin-bottom: 10px; }
.delivery-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 6px; }
.delivery-head form { margin-left: auto; }
.excerpt { white-space: pre-wrap; word-break: break-word; }
.tabs ul { display: flex; gap: 6px; flex-wrap: wrap; list-style: none; padding: 0; margin: 0 0 12px; }
.tabs a { display: block; padding: 6px 12px; border-radius: 999px; background: #fff; border: 1px solid var(--line); text-decoration: none; color: var(--ink); font-weight: 600; font-size: .88rem; }
.tabs a[aria-current=page] { background: var(--ink); color: #fff; border-color: var(--ink); }
.secret { background: var(--wait-bg); border-radius: 10px; padding: 12px 14px; margin-bottom: 12px; }
.copy-row { display: flex; gap: 10px; align-items: flex-start; }
.copy-row code, .copy-row pre { flex: 1; word-break: break-all; }
.match.none { color: var(--bad); }
.match .failed { font-family: ui-monospace, monospace; font-size: .8rem; }
.allowlist input { width: 180px; padding: 5px 8px; font-size: .82rem; }
.actions { display: flex; flex-wrap: wrap; }
.quick { margin-top: 8px; }
.url { word-break: break-all; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.empty { color: var(--muted); font-style: italic; }
.pager { margin: 10px 0 0; }
details.add { margin-top: 12px; }
details summary { cursor: pointer; font-weight: 600; }
.live-note { font-size: .82rem; }
[aria-busy=true] { opacity: .85; }
progress { width: 100%; height: 14px; accent-color: var(--brand); }
`;

export const DASHBOARD_JS = `
'use strict';
(function () {
  // Copy buttons: the text of the element they name.
  document.addEventListener('click', function (e) {
    var button = e.target.closest && e.target.closest('[data-copy]');
    if (!button) return;
    var source = document.getElementById(button.getAttribute('data-copy'));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = 'Copy'; }, 1500);
    });
  });

  // A button shows that its form is on its way (and is not pressed twice).
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (form.method.toLowerCase() !== 'post') return;
    var button = form.querySelector('button[type=submit]');
    if (button && !button.name) setTimeout(function () { button.disabled = true; }, 0);
  });

  // The message of the last action is announced and focused, so keyboard and screen-reader users land on it.
  var flash = document.getElementById('flash');
  if (flash && flash.textContent.trim()) {
    flash.setAttribute('tabindex', '-1');
    flash.focus();
  }

  // Progress: each [data-poll-fragment] is fetched again every half second while what it shows runs.
  document.querySelectorAll('[data-poll-fragment]').forEach(function (el) {
    function poll() {
      if (!el.querySelector('[data-advance-state=running]')) return;
      fetch(el.getAttribute('data-poll-fragment'), { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then(function (res) { return res.ok ? res.text() : null; })
        .then(function (text) {
          if (text === null) return; // gone (the server restarted): nothing more to follow
          if (text !== el.innerHTML) el.innerHTML = text;
          setTimeout(poll, 500);
        })
        .catch(function () { setTimeout(poll, 2000); });
    }
    setTimeout(poll, 500);
  });

  // Live updates: each [data-live-fragment] is fetched again when an event arrives, and what
  // changed is announced in one short polite message (not the whole fragment).
  var live = document.querySelectorAll('[data-live-fragment]');
  if (!live.length || !window.EventSource) return;
  var announcer = document.getElementById('live-status');
  var timers = [];
  function statusOf(el) {
    var s = el.querySelector('[data-object-status]');
    return s ? s.getAttribute('data-object-status') : null;
  }
  function refresh() {
    live.forEach(function (el) {
      el.setAttribute('aria-busy', 'true');
      fetch(el.getAttribute('data-live-fragment'), { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then(function (res) { return res.ok ? res.text() : null; })
        .then(function (text) {
          el.setAttribute('aria-busy', 'false');
          if (text === null || text === el.innerHTML) return;
          var before = statusOf(el);
          el.innerHTML = text;
          el.setAttribute('data-refreshed', String(Date.now()));
          var after = statusOf(el);
          if (announcer) announcer.textContent = after && after !== before ? 'Status is now ' + after + '.' : 'Updated.';
        })
        .catch(function () { el.setAttribute('aria-busy', 'false'); });
    });
  }
  // An event is followed by work it causes (a delivery attempt, a journal): look again shortly after.
  function soon() {
    timers.forEach(clearTimeout);
    timers = [200, 1200, 3500].map(function (ms) { return setTimeout(refresh, ms); });
  }
  var source = new EventSource('/dashboard/events');
  source.onmessage = soon;
  source.onopen = function () { document.body.setAttribute('data-live', 'connected'); };
  source.onerror = function () { document.body.setAttribute('data-live', 'reconnecting'); };
})();
`;

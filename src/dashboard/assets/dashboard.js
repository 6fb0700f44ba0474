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
      setTimeout(function () {
        button.textContent = 'Copy';
      }, 1500);
    });
  });

  // A button shows that its form is on its way (and is not pressed twice).
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (form.method.toLowerCase() !== 'post') return;
    var button = form.querySelector('button[type=submit]');
    if (button && !button.name)
      setTimeout(function () {
        button.disabled = true;
      }, 0);
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
        .then(function (res) {
          return res.ok ? res.text() : null;
        })
        .then(function (text) {
          if (text === null) return; // gone (the server restarted): nothing more to follow
          if (text !== el.innerHTML) el.innerHTML = text;
          setTimeout(poll, 500);
        })
        .catch(function () {
          setTimeout(poll, 2000);
        });
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
        .then(function (res) {
          return res.ok ? res.text() : null;
        })
        .then(function (text) {
          el.setAttribute('aria-busy', 'false');
          if (text === null || text === el.innerHTML) return;
          var before = statusOf(el);
          el.innerHTML = text;
          el.setAttribute('data-refreshed', String(Date.now()));
          var after = statusOf(el);
          if (announcer) announcer.textContent = after && after !== before ? 'Status is now ' + after + '.' : 'Updated.';
        })
        .catch(function () {
          el.setAttribute('aria-busy', 'false');
        });
    });
  }
  // An event is followed by work it causes (a delivery attempt, a journal): look again shortly after.
  function soon() {
    timers.forEach(clearTimeout);
    timers = [200, 1200, 3500].map(function (ms) {
      return setTimeout(refresh, ms);
    });
  }
  var source = new EventSource('/dashboard/events');
  source.onmessage = soon;
  source.onopen = function () {
    document.body.setAttribute('data-live', 'connected');
  };
  source.onerror = function () {
    document.body.setAttribute('data-live', 'reconnecting');
  };
})();

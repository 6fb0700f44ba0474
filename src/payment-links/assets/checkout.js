'use strict';
(function () {
  var form = document.getElementById('pay-form');
  if (!form) return;
  var slug = form.getAttribute('data-slug');
  var status = document.getElementById('status');
  var payButton = document.getElementById('pay-button');
  var customer = document.getElementById('customer');
  var customerLabel = document.getElementById('customer-label');
  var customerHint = document.getElementById('customer-hint');
  var amount = document.getElementById('amount');
  var otpForm = document.getElementById('otp-form');
  var otp = document.getElementById('otp');
  var otpButton = document.getElementById('otp-button');
  var collectionId = null;
  var polling = null;

  var labels = {
    momo: ['Mobile money number', 'MTN, Telecel or AT, e.g. 024 123 4567. You approve the payment on your phone.', 'tel'],
    card: ['Card number', 'Visa, Mastercard or Verve. Your bank may send you a one-time password.', 'text'],
  };
  function channel() {
    return form.querySelector('input[name=channel]:checked').value;
  }
  function syncChannel() {
    var l = labels[channel()];
    customerLabel.textContent = l[0];
    customerHint.textContent = l[1];
    customer.setAttribute('inputmode', l[2] === 'tel' ? 'tel' : 'numeric');
    customer.setAttribute('autocomplete', channel() === 'card' ? 'cc-number' : 'tel');
  }
  Array.prototype.forEach.call(form.querySelectorAll('input[name=channel]'), function (r) {
    r.addEventListener('change', syncChannel);
  });
  syncChannel();

  function say(kind, title, text) {
    status.className = 'status ' + kind;
    status.setAttribute('role', kind === 'failed' || kind === 'error' ? 'alert' : 'status');
    status.innerHTML = '';
    var strong = document.createElement('strong');
    var spinner = kind === 'pending' ? document.createElement('span') : null;
    if (spinner) {
      spinner.className = 'spinner';
      spinner.setAttribute('aria-hidden', 'true');
      strong.appendChild(spinner);
    }
    strong.appendChild(document.createTextNode(title));
    status.appendChild(strong);
    if (text) status.appendChild(document.createTextNode(text));
    status.setAttribute('data-state', kind);
    status.focus();
  }
  // A refused field is marked invalid and described by the message as well as its hint.
  function clearInvalid() {
    [customer, amount, otp].forEach(function (el) {
      if (!el) return;
      el.removeAttribute('aria-invalid');
      var hint = el.getAttribute('data-hint');
      if (hint) el.setAttribute('aria-describedby', hint);
      else el.removeAttribute('aria-describedby');
    });
  }
  function markInvalid(fields) {
    (fields || []).forEach(function (f) {
      var el = f.field === 'amount' ? amount : f.field === 'otp' ? otp : f.field.indexOf('customer') === 0 ? customer : null;
      if (!el) return;
      el.setAttribute('aria-invalid', 'true');
      el.setAttribute('aria-describedby', ((el.getAttribute('data-hint') || '') + ' status').trim());
    });
  }
  [customer, amount, otp].forEach(function (el) {
    if (el && el.getAttribute('aria-describedby')) el.setAttribute('data-hint', el.getAttribute('aria-describedby'));
  });
  function token() {
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.prototype.map
      .call(bytes, function (b) {
        return ('0' + b.toString(16)).slice(-2);
      })
      .join('');
  }
  function send(method, path, body) {
    return fetch(path, {
      method: method,
      headers: body ? { 'Content-Type': 'application/json', Accept: 'application/json' } : { Accept: 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'omit',
    }).then(function (res) {
      return res.json().then(function (json) {
        return { status: res.status, body: json };
      });
    });
  }
  function problem(res) {
    var fields = res.body && res.body.error && res.body.error.details && res.body.error.details.fields;
    markInvalid(fields);
    var text =
      fields && fields.length
        ? fields
            .map(function (f) {
              return f.message;
            })
            .join('. ') + '.'
        : (res.body && res.body.message) || 'Please try again.';
    say('error', 'We could not take this payment.', ' ' + text);
    payButton.disabled = false;
  }
  function show(c) {
    if (c.status === 'settled') {
      stop();
      otpForm.hidden = true;
      form.hidden = true;
      say('success', 'Payment received.', ' GHS ' + c.amount_major + ' paid. You can close this page.');
    } else if (c.status === 'failed') {
      stop();
      otpForm.hidden = true;
      form.hidden = false;
      say('failed', 'Payment failed.', ' ' + reason(c.failure_reason) + ' You can try again.');
      payButton.disabled = false;
      form.setAttribute('data-submission', token());
    } else if (c.next_action && c.next_action.type === 'otp') {
      stop();
      if (otpForm.hidden) {
        form.hidden = true;
        otpForm.hidden = false;
        say('action', 'One more step.', ' ' + c.next_action.message + '.');
        otp.focus();
      }
    } else {
      say('pending', 'Waiting for your approval.', c.channel === 'momo' ? ' Approve the prompt on your phone. This page updates by itself.' : ' Your bank is confirming the payment.');
      poll();
    }
  }
  function reason(code) {
    var known = {
      insufficient_funds: 'There was not enough money in the account.',
      declined_by_customer: 'The payment was not approved.',
      do_not_honour: 'Your bank declined the card.',
      expired_card: 'The card has expired.',
      invalid_otp: 'The one-time password was not right.',
      account_not_found: 'No account was found for this number.',
      limit_reached: 'The account has reached its limit.',
      expired: 'The approval took too long.',
    };
    return known[code] || 'The provider refused the payment' + (code ? ' (' + code + ').' : '.');
  }
  function stop() {
    if (polling) {
      clearTimeout(polling);
      polling = null;
    }
  }
  function poll() {
    if (polling) return;
    polling = setTimeout(function tick() {
      send('GET', '/pay/' + slug + '/collections/' + collectionId).then(
        function (res) {
          polling = null;
          if (res.status !== 200) return problem(res);
          if (res.body.data.status === 'pending_approval' && !res.body.data.next_action) {
            polling = setTimeout(tick, 1000);
            return;
          }
          show(res.body.data);
        },
        function () {
          polling = setTimeout(tick, 2000);
        },
      );
    }, 1000);
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    if (payButton.disabled) return;
    clearInvalid();
    payButton.disabled = true;
    if (!form.getAttribute('data-submission')) form.setAttribute('data-submission', form.elements.submission.value);
    var body = { channel: channel(), customer: customer.value.trim(), submission: form.getAttribute('data-submission') };
    if (amount) body.amount = amount.value.trim();
    say('pending', 'Starting your payment.', '');
    send('POST', '/pay/' + slug + '/collections', body).then(
      function (res) {
        if (res.status !== 201 && res.status !== 200) return problem(res);
        collectionId = res.body.data.id;
        show(res.body.data);
      },
      function () {
        say('error', 'No connection.', ' Check your connection and try again.');
        payButton.disabled = false;
      },
    );
  });

  otpForm.addEventListener('submit', function (e) {
    e.preventDefault();
    clearInvalid();
    otpButton.disabled = true;
    say('pending', 'Checking the one-time password.', '');
    send('POST', '/pay/' + slug + '/collections/' + collectionId + '/otp', { otp: otp.value.trim() }).then(
      function (res) {
        otpButton.disabled = false;
        if (res.status !== 200) {
          markInvalid(res.body.error && res.body.error.details && res.body.error.details.fields);
          return say('error', 'That did not work.', ' ' + res.body.message);
        }
        otpForm.hidden = res.body.data.status !== 'pending_approval';
        if (res.body.data.status === 'pending_approval' && !res.body.data.next_action) {
          say('pending', 'Confirming with your bank.', '');
          poll();
          return;
        }
        show(res.body.data);
      },
      function () {
        otpButton.disabled = false;
        say('error', 'No connection.', ' Check your connection and try again.');
      },
    );
  });
})();

// Step-up: the approver's passkeys and security keys (list, add, remove),
// and the assertion an approval of a step-up question carries. The server
// binds each assertion's challenge to the question (request id and digest)
// and accepts it once. window.signoffStepUp(id) is called by app.js.
(() => {
  'use strict';
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || '';
  const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const unb64 = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

  async function post(url, body) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body || {}),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((data.error && data.error.message) || 'HTTP ' + res.status);
    return data;
  }

  // signoffStepUp asks the authenticator to confirm the approval of
  // question id and returns the assertion to send with it.
  window.signoffStepUp = async (id) => assert((await post('/api/stepup/begin', { request_id: id })).publicKey);

  // assert asks an authenticator for an assertion of opts and returns it
  // as the server reads it.
  async function assert(opts) {
    opts.challenge = unb64(opts.challenge);
    for (const c of opts.allowCredentials || []) c.id = unb64(c.id);
    const cred = await navigator.credentials.get({ publicKey: opts });
    if (!cred) throw new Error('no passkey or security key answered');
    const r = cred.response;
    return {
      id: cred.id, rawId: b64(cred.rawId), type: cred.type,
      response: {
        clientDataJSON: b64(r.clientDataJSON), authenticatorData: b64(r.authenticatorData),
        signature: b64(r.signature), userHandle: r.userHandle ? b64(r.userHandle) : undefined,
      },
    };
  }

  // confirm asks one of the approver's keys to confirm a change of their
  // keys (add, or remove id): needed once they have one, none before.
  let keys = [];
  async function confirm(change) {
    if (keys.length === 0) return undefined;
    show('pending', 'Confirm with one of your security keys…');
    return assert((await post('/api/webauthn/confirm/begin', change)).publicKey);
  }

  const list = document.getElementById('keys-list');
  const status = document.getElementById('keys-status');
  const show = (cls, text) => { if (status) { status.className = 'reply ' + cls; status.textContent = text; } };

  function render(creds) {
    keys = creds || [];
    if (!list) return;
    list.replaceChildren();
    for (const c of creds) {
      const li = document.createElement('li');
      li.className = 'key';
      li.dataset.id = c.id;
      const name = document.createElement('span');
      name.textContent = c.name + ' — added ' + new Date(c.added_at).toLocaleString();
      const rm = document.createElement('button');
      rm.type = 'button';
      rm.className = 'link key-remove';
      rm.textContent = 'Remove';
      rm.addEventListener('click', async () => {
        try {
          const confirmed = await confirm({ action: 'remove', id: c.id });
          render((await post('/api/webauthn/credentials/remove', { id: c.id, confirm: confirmed })).credentials);
          show('ok', 'Removed.');
        } catch (err) { show('error', err.message); }
      });
      li.append(name, ' ', rm);
      list.append(li);
    }
  }

  // firstKey is what the first key needs besides the sign-in: '' (no
  // more), 'code' (the one-time enrollment code), 'unavailable' (a code
  // was never issued: the server's refusal says what to do).
  let firstKey = '';
  async function load() {
    const res = await fetch('/api/webauthn/credentials', { headers: { Accept: 'application/json' } });
    if (!res.ok) return;
    const data = await res.json();
    firstKey = data.first_key || '';
    const row = document.getElementById('key-code-row');
    if (row) row.hidden = firstKey !== 'code';
    render(data.credentials);
  }

  const add = document.getElementById('key-add');
  if (add) {
    add.addEventListener('click', async () => {
      try {
        const confirmed = await confirm({ action: 'add' });
        show('pending', 'Touch your new security key…');
        const begin = { confirm: confirmed };
        if (keys.length === 0 && firstKey === 'code') begin.enroll_code = (document.getElementById('key-code')?.value || '').trim();
        const opts = (await post('/api/webauthn/register/begin', begin)).publicKey;
        opts.challenge = unb64(opts.challenge);
        opts.user.id = unb64(opts.user.id);
        for (const c of opts.excludeCredentials || []) c.id = unb64(c.id);
        const cred = await navigator.credentials.create({ publicKey: opts });
        const r = cred.response;
        const body = {
          name: document.getElementById('key-name')?.value || '',
          credential: {
            id: cred.id, rawId: b64(cred.rawId), type: cred.type,
            response: { clientDataJSON: b64(r.clientDataJSON), attestationObject: b64(r.attestationObject) },
          },
        };
        render((await post('/api/webauthn/register/finish', body)).credentials);
        firstKey = '';
        const row = document.getElementById('key-code-row');
        if (row) row.hidden = true;
        show('ok', 'Security key added.');
      } catch (err) { show('error', err.message); }
    });
  }
  load();
})();

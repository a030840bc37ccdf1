// Signoff approver page, Grants view: the standing grants of the approver's
// teams from GET /api/grants, revoked through POST /api/grants/revoke.
// Items are rendered (and escaped) by the server; this script only places
// them, switches views by the URL's #grants, and sends revocations.
'use strict';

(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const list = document.getElementById('grants-list');
  const status = document.getElementById('grants-status');
  const empty = document.getElementById('grants-empty');
  const refresh = document.getElementById('grants-refresh');
  if (!list) return;

  let loading = null;

  function fromHTML(html) {
    const t = document.createElement('template');
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  function setStatus(cls, text) {
    status.className = 'reply ' + cls;
    status.textContent = text;
  }

  const errorText = (res, body) => (body && body.error && body.error.message) || 'HTTP ' + res.status;

  // call fetches url with init and reads its JSON body ({} when there is
  // none); when the session is gone it goes to the login page and returns
  // null.
  async function call(url, init) {
    const res = await fetch(url, init);
    if (res.status === 401) {
      location.assign('/login');
      return null;
    }
    return { res, body: await res.json().catch(() => ({})) };
  }

  // load replaces the list with the brokers' current one.
  async function load() {
    if (loading) return loading;
    loading = (async () => {
      setStatus('pending', 'Loading…');
      try {
        const got = await call('/api/grants', { headers: { Accept: 'application/json' } });
        if (!got) return;
        const { res, body } = got;
        if (!res.ok) {
          setStatus('error', 'Grants not listed: ' + errorText(res, body));
          return;
        }
        list.replaceChildren(...body.grants.map((g) => fromHTML(g.html)).filter(Boolean));
        empty.hidden = body.grants.length !== 0;
        setStatus('', '');
        list.dataset.loaded = String(Date.now());
      } catch (err) {
        setStatus('error', 'Network error: ' + err.message);
      } finally {
        loading = null;
      }
    })();
    return loading;
  }

  async function revoke(btn) {
    const item = btn.closest('.grant');
    const reply = item.querySelector('.reply');
    const show = (cls, text) => {
      reply.className = 'reply ' + cls;
      reply.textContent = text;
    };
    btn.disabled = true;
    show('pending', 'Revoking…');
    try {
      const got = await call('/api/grants/revoke', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify({ grant_id: item.dataset.id }),
      });
      if (!got) return;
      const { res, body } = got;
      if (!res.ok) {
        show('error', 'Not revoked: ' + errorText(res, body));
        btn.disabled = false;
        return;
      }
      item.classList.add('revoked');
      btn.remove();
      show('ok', body.message);
    } catch (err) {
      show('error', 'Network error: ' + err.message);
      btn.disabled = false;
    }
  }

  function show(tab) {
    document.body.classList.toggle('show-grants', tab === 'grants');
    for (const a of document.querySelectorAll('.tabs .tab')) {
      if (a.dataset.tab === tab) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (tab === 'grants') load();
  }

  const fromHash = () => show(location.hash === '#grants' ? 'grants' : 'questions');

  window.addEventListener('hashchange', fromHash);
  list.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-revoke]');
    if (btn && !btn.disabled) revoke(btn);
  });
  refresh.addEventListener('click', () => load());
  fromHash();
})();

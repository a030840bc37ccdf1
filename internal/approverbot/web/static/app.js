// Signoff approver page: live cards from server-sent events, answers through
// POST /api/respond. Cards are rendered (and escaped) by the server; this
// script only places them, ticks the countdowns and sends answers. It tells
// notify.js what happens with DOM events on document: "signoff:question"
// ({id, tool, summary, fresh}: fresh is false for a card already shown or
// listed at load), "signoff:reminder" (the same, for a question re-asked by
// an escalation's reminder), "signoff:settled" ({id}) and "signoff:count"
// ({open}).
'use strict';

(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const linger = parseInt(document.body.dataset.lingerMs, 10) || 4000;
  // A button that approves is not taken for guardMs after it moved or
  // appeared where it is: a card above that settles, expires or is
  // withdrawn (an agent can withdraw its own request at will) moves the
  // cards below it, and a click aimed at one question's Approve must not
  // land on the next one's.
  const guardAttr = parseInt(document.body.dataset.guardMs, 10);
  const guardMs = Number.isNaN(guardAttr) ? 800 : guardAttr;
  const list = document.getElementById('questions');
  const empty = document.getElementById('empty');
  const count = document.getElementById('count');
  const conn = document.getElementById('conn');

  // Ids of questions that were settled: a late update must not bring them
  // back.
  const done = new Set();
  // Ids updated by the event stream while a reload was in flight: the
  // reload's older list must not drop them.
  let touched = null;
  // Server clock minus browser clock, from the Date header, so that
  // countdowns are right on a device whose clock is off.
  let skew = 0;

  const cardOf = (id) => document.getElementById('q-' + id);

  function fromHTML(html) {
    const t = document.createElement('template');
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  // loaded is false until the first list arrived: questions already open
  // when the page loads are not news.
  let loaded = false;

  function emit(name, detail) {
    document.dispatchEvent(new CustomEvent('signoff:' + name, { detail }));
  }

  function refreshCount() {
    const open = list.querySelectorAll('.card:not(.resolved)').length;
    count.textContent = String(open);
    empty.hidden = list.querySelector('.card') !== null;
    emit('count', { open });
  }

  // approves reports a button that sends an approval of the call as the
  // card shows it: Approve, Session, Always and Confirm Always.
  const approves = (b) => ['approve', 'session', 'always'].includes(b.dataset.action);

  // editing reports a card whose editor is open: an approval with changes
  // is pending on it.
  const editing = (card) => {
    const ed = card.querySelector('.editor');
    return !!ed && !ed.hidden;
  };

  // syncButtons sets which of a card's answering buttons may be pressed:
  // none the server refused, and, while an edit is open, none that
  // approves the call as it was — the edit is approved through its own
  // Approve with changes, and Cancel brings the others back (red team AP
  // F10: the card's Approve, a few rows above, approved the unedited call
  // and dropped the edit without a word).
  function syncButtons(card) {
    const ed = editing(card);
    for (const b of card.querySelectorAll('button[data-action]')) {
      b.disabled = b.hasAttribute('data-refused') || (ed && approves(b));
    }
    if (ed) for (const box of card.querySelectorAll('.always-confirm')) box.remove();
  }
  // edit.js says when an editor opens or closes.
  list.addEventListener('signoff:editor', (e) => syncButtons(e.target.closest('.card')));

  // keepForm carries what the approver typed and picked from a card to its
  // replacement.
  function keepForm(cur, next) {
    for (const el of cur.querySelectorAll('.feedback, .ask-text, .ask-opt input')) {
      const sel = el.matches('.ask-opt input') ? 'input[name="' + CSS.escape(el.name) + '"][value="' + CSS.escape(el.value) + '"]'
        : el.matches('.ask-text') ? '.ask-q[data-q="' + CSS.escape(el.closest('.ask-q').dataset.q) + '"] .ask-text' : '.feedback';
      const twin = next.querySelector(sel);
      if (!twin) continue;
      if (el.matches('.ask-opt input')) twin.checked = el.checked;
      else twin.value = el.value;
    }
    // An editor left open keeps its text (edit.js).
    const ed = cur.querySelector('.editor');
    const ned = next.querySelector('.editor');
    if (ed && ned && !ed.hidden) {
      ned.hidden = false;
      ned.querySelector('.edit-text').value = ed.querySelector('.edit-text').value;
    }
  }

  function setConn(state, text) {
    conn.className = 'conn ' + state;
    conn.textContent = text;
  }

  function formatLeft(s) {
    if (s <= 0) return 'time is up';
    if (s >= 3600) return Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm left';
    return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0') + ' left';
  }

  function tick() {
    const now = Date.now() + skew;
    for (const el of list.querySelectorAll('.countdown[data-expires]')) {
      const left = Math.round((Date.parse(el.dataset.expires) - now) / 1000);
      el.textContent = formatLeft(left);
      el.classList.toggle('urgent', left > 0 && left <= 60);
      el.classList.toggle('over', left <= 0);
    }
  }

  // upsert shows a new question or replaces its card, keeping what the
  // approver typed and the reply to their last answer.
  function upsert(view) {
    const id = view.request_id;
    if (done.has(id)) return;
    const next = fromHTML(view.html);
    if (!next) return;
    const cur = cardOf(id);
    if (cur) {
      const focusedEl = cur.contains(document.activeElement) ? document.activeElement : null;
      keepForm(cur, next);
      const reply = cur.querySelector('.reply');
      const nreply = next.querySelector('.reply');
      if (reply && nreply) {
        nreply.className = reply.className;
        nreply.textContent = reply.textContent;
      }
      if (cur.classList.contains('fresh')) next.classList.add('fresh');
      syncButtons(next);
      cur.replaceWith(next);
      if (focusedEl) {
        const twin = focusedEl.matches('.feedback') ? next.querySelector('.feedback')
          : focusedEl.matches('.ask-text') ? next.querySelector('.ask-q[data-q="' + CSS.escape(focusedEl.closest('.ask-q').dataset.q) + '"] .ask-text')
          : focusedEl.matches('.edit-text') ? next.querySelector('.edit-text') : null;
        if (twin) twin.focus();
      }
    } else {
      list.appendChild(next);
    }
    if (touched) touched.add(id);
    tick();
    refreshCount();
    // A reminder (an escalation step re-asks the question) is news again.
    const q = view.question || {};
    const reminder = q.reminder || 0;
    const before = cur ? parseInt(cur.dataset.reminder || '0', 10) : 0;
    next.dataset.reminder = String(Math.max(reminder, before));
    const detail = { id, tool: view.tool || '', summary: view.summary || '', fresh: loaded };
    if (!cur) emit('question', detail);
    else if (reminder > before) emit('reminder', detail);
  }

  // settle shows how a question ended, takes its buttons away, and removes
  // the card after a few seconds.
  function settle(id, text, outcome) {
    if (done.has(id)) return;
    done.add(id);
    emit('settled', { id });
    const card = cardOf(id);
    if (!card) return;
    card.classList.add('resolved');
    if (outcome === 'allow') card.classList.add('allowed');
    if (outcome === 'deny') card.classList.add('denied');
    // The card keeps its height until it goes: the cards below stay put.
    card.style.minHeight = card.offsetHeight + 'px';
    for (const el of card.querySelectorAll('.answer, .countdown')) el.remove();
    const out = card.querySelector('.outcome');
    out.textContent = text;
    out.hidden = false;
    refreshCount();
    setTimeout(() => {
      card.classList.add('leaving');
      setTimeout(() => {
        card.remove();
        refreshCount();
      }, 250);
    }, linger);
  }

  // reload fetches the open questions after the stream (re)connects: what
  // was missed meanwhile is added, and cards of questions settled meanwhile
  // go.
  async function reload() {
    touched = new Set();
    try {
      const res = await fetch('/api/questions', { headers: { Accept: 'application/json' } });
      if (res.status === 401) {
        location.assign('/login');
        return;
      }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const date = Date.parse(res.headers.get('Date'));
      if (!Number.isNaN(date)) skew = date - Date.now();
      const body = await res.json();
      const listed = new Set(body.questions.map((v) => v.request_id));
      for (const card of list.querySelectorAll('.card:not(.resolved)')) {
        const id = card.dataset.id;
        if (!listed.has(id) && !touched.has(id)) settle(id, 'Settled while this page was offline', '');
      }
      for (const v of body.questions) upsert(v);
    } finally {
      touched = null;
      loaded = true;
    }
  }

  let retry = null;
  function connect() {
    const es = new EventSource('/events');
    es.addEventListener('open', () => {
      setConn('live', 'live');
      reload().catch(() => setConn('offline', 'offline'));
    });
    es.addEventListener('question', (e) => upsert(JSON.parse(e.data)));
    es.addEventListener('resolved', (e) => {
      const r = JSON.parse(e.data);
      settle(r.request_id, r.text, r.outcome);
    });
    es.addEventListener('error', () => {
      if (es.readyState !== EventSource.CLOSED) {
        setConn('reconnecting', 'reconnecting…');
        return;
      }
      // The server refused the stream (signed out, or restarting): check
      // the session, then try again.
      es.close();
      setConn('offline', 'offline');
      clearTimeout(retry);
      retry = setTimeout(async () => {
        try {
          const res = await fetch('/api/session', { headers: { Accept: 'application/json' } });
          if (res.status === 401) {
            location.assign('/login');
            return;
          }
        } catch (_) {
          // Offline: the next attempt tells.
        }
        connect();
      }, 3000);
    });
  }

  // picksOf reads an ask-user card's form: per question, the options
  // picked and the text typed (questions left empty are left out).
  function picksOf(card) {
    const picks = [];
    for (const q of card.querySelectorAll('.ask-q')) {
      const options = [...q.querySelectorAll('.ask-opt input:checked')].map((i) => parseInt(i.value, 10));
      const t = q.querySelector('.ask-text');
      const text = t ? t.value.trim() : '';
      if (options.length || text) picks.push({ question: parseInt(q.dataset.q, 10), options, text });
    }
    return picks;
  }

  async function answer(btn) {
    const card = btn.closest('.card');
    const id = card.dataset.id;
    const fb = card.querySelector('.feedback');
    const show = (cls, text) => {
      const reply = (cardOf(id) || card).querySelector('.reply');
      reply.className = 'reply ' + cls;
      reply.textContent = text;
    };
    if (editing(card) && approves(btn)) {
      show('error', 'Not sent: an edit is open on this card. Approve with changes sends it; Cancel it to approve the call as it was.');
      return;
    }
    const picks = btn.dataset.action === 'answer' ? picksOf(card) : null;
    if (picks && picks.length === 0) {
      show('error', 'Nothing sent: the answer is empty. Pick an option or type an answer first.');
      return;
    }
    const buttons = card.querySelectorAll('button[data-action]');
    for (const b of buttons) b.disabled = true;
    show('pending', 'Sending…');
    try {
      const req = picks ? { request_id: id, action: 'answer', picks }
        : { request_id: id, action: btn.dataset.action, feedback: fb ? fb.value : '' };
      // The version of the question this card shows: the answer is to it.
      req.digest = card.dataset.digest;
      if (card.hasAttribute('data-stepup') && ['approve', 'session', 'always'].includes(btn.dataset.action)) {
        // Step-up: the passkey or security key confirms this approval.
        show('pending', 'Confirm with your passkey or security key…');
        req.step_up = await window.signoffStepUp(id);
      }
      const res = await fetch('/api/respond', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify(req),
      });
      if (res.status === 401) {
        location.assign('/login');
        return;
      }
      const body = await res.json().catch(() => ({}));
      if (!res.ok) {
        show('error', (body.error && body.error.message) || 'HTTP ' + res.status);
      } else {
        show(body.applied ? 'ok' : 'warn', body.message);
      }
    } catch (err) {
      show('error', (err.name === 'TypeError' ? 'Network error: ' : '') + err.message);
    } finally {
      for (const b of buttons) b.disabled = b.hasAttribute('data-refused');
      const now = cardOf(id);
      if (now) syncButtons(now);
    }
  }

  // places records where each card's deciding controls are on the page
  // (by card id and control, so a card re-rendered in place has not
  // moved) and since when.
  const places = new Map();
  // deciding are the controls whose click decides what is sent: the
  // buttons that approve, and an ask-user card's options, whose pick is
  // the answer its Send answer only sends (red team AP F5: the guard's
  // list was "approving buttons", and a click aimed at option 1 landed on
  // option 2 of a moving card). A label's click is the option's.
  const deciding = 'button[data-action="approve"], button[data-action="session"], button[data-action="always"], button[data-action="answer"], [data-edit-send], .ask-opt';
  const placeKey = (el) => {
    const id = el.closest('.card').dataset.id;
    if (el.matches('.ask-opt')) {
      const input = el.querySelector('input');
      return id + ' option ' + (input ? input.name + ' ' + input.value : '');
    }
    return id + ' ' + (el.dataset.action || 'edit') + (el.hasAttribute('data-always-confirm') ? ' confirm' : '');
  };
  // Places are where the buttons are on the screen: the page scrolling
  // under a resting pointer (it gets shorter when the last card goes, and
  // the browser pulls the scroll back) moves them as much as a card above
  // going does.
  function notePlaces() {
    const now = performance.now();
    const seen = new Set();
    for (const btn of list.querySelectorAll(deciding)) {
      const r = btn.getBoundingClientRect();
      const top = r.top;
      const left = r.left;
      const key = placeKey(btn);
      seen.add(key);
      const p = places.get(key);
      if (!p || Math.abs(p.top - top) >= 1 || Math.abs(p.left - left) >= 1) places.set(key, { top, left, at: now });
    }
    for (const key of places.keys()) if (!seen.has(key)) places.delete(key);
  }
  // aimedAt is when the approver last aimed: moved the mouse, or touched
  // the screen (a finger does not rest on a button while cards move).
  let aimedAt = 0;
  if (guardMs > 0) {
    const ro = new ResizeObserver(notePlaces);
    ro.observe(list);
    ro.observe(document.body);
    new MutationObserver(notePlaces).observe(list, { childList: true });
    window.addEventListener('scroll', notePlaces, { passive: true });
    document.addEventListener('pointermove', () => { aimedAt = performance.now(); }, { passive: true, capture: true });
    document.addEventListener('pointerdown', (e) => {
      if (e.pointerType !== 'mouse') aimedAt = performance.now();
    }, { passive: true, capture: true });
  }

  // A click on a deciding control is not taken (capture: before edit.js's,
  // and before a label passes it to its option) when the control moved or
  // appeared within guardMs, or, for a pointer's click, when it moved
  // since the pointer last moved: it slid under a resting pointer, which
  // aimed at something else. A key's click (detail 0) acts on the focused
  // control, which no move changes.
  list.addEventListener('click', (e) => {
    const btn = e.target.closest(deciding);
    if (!btn || guardMs <= 0) return;
    notePlaces();
    const p = places.get(placeKey(btn));
    if (p && performance.now() - p.at >= guardMs && (e.detail === 0 || aimedAt > p.at)) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    const reply = btn.closest('.card').querySelector('.reply');
    reply.className = 'reply moved';
    reply.textContent = btn.hasAttribute('data-always-confirm')
      ? 'Not sent: the confirmation just appeared. Read what Always grants, then click Confirm Always again.'
      : btn.matches('.ask-opt')
        ? 'Not picked: this card moved under the pointer. Check which question and option it is, then point at it and pick again.'
        : 'Not sent: this card moved under the pointer. Check which question it is, then point at it and click again.';
  }, true);

  // Always is a standing grant: its button shows what it grants and a
  // Confirm Always button that appears for it, which the move guard holds
  // like any approving button that appeared (red team AL F7: one click,
  // or a slip from Session beside it, granted for 30 days).
  function askAlways(btn) {
    const card = btn.closest('.card');
    if (card.querySelector('.always-confirm')) return;
    // What it grants comes from the server as it is to be shown: the
    // core's words, then each pattern in code type. It is cloned, never
    // rebuilt from the card's text, which loses where a pattern ends (red
    // team AP F1).
    const tpl = card.querySelector('template.always-confirm-text');
    const box = document.createElement('div');
    box.className = 'always-confirm';
    const what = document.createElement('div');
    what.className = 'always-what';
    if (tpl) what.append(tpl.content.cloneNode(true));
    else what.textContent = 'Always is a standing grant: the calls it covers run without a question.';
    const row = document.createElement('div');
    row.className = 'buttons';
    const ok = document.createElement('button');
    ok.type = 'button';
    ok.className = 'btn always';
    ok.dataset.action = 'always';
    ok.setAttribute('data-always-confirm', '');
    ok.textContent = 'Confirm Always';
    const no = document.createElement('button');
    no.type = 'button';
    no.className = 'btn';
    no.setAttribute('data-always-cancel', '');
    no.textContent = 'Cancel';
    row.append(ok, no);
    box.append(what, row);
    btn.closest('.buttons').after(box);
    notePlaces();
  }

  list.addEventListener('click', (e) => {
    const cancel = e.target.closest('[data-always-cancel]');
    if (cancel) {
      cancel.closest('.always-confirm').remove();
      return;
    }
    const btn = e.target.closest('button[data-action]');
    if (!btn || btn.disabled) return;
    if (btn.dataset.action === 'always' && !btn.hasAttribute('data-always-confirm')) askAlways(btn);
    else answer(btn);
  });

  const logout = document.getElementById('logout');
  if (logout) {
    logout.addEventListener('click', async () => {
      let next = '/login';
      try {
        const r = await fetch('/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf } });
        // Signed in with OIDC: the provider's session ends too.
        if (r.status === 200) next = (await r.json()).end_session_url || next;
      } finally {
        location.assign(next);
      }
    });
  }

  tick();
  setInterval(tick, 1000);
  connect();
})();

// Approve with changes on the Signoff approver page: a card's Edit… button
// opens its editor (the command of a shell call, else the arguments as a
// JSON object); the text is checked here before it is sent, and the server
// checks it again and has the policy judge the changed call.
'use strict';

(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const list = document.getElementById('questions');

  // problem says what is wrong with an editor's text ('' when it may go).
  function problem(editor) {
    const text = editor.querySelector('.edit-text').value;
    if (editor.dataset.shell === 'true') {
      if (text.trim() === '') return 'The command is empty: reject the call instead.';
      if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return 'The command holds a control character.';
      return '';
    }
    let v;
    try {
      v = JSON.parse(text);
    } catch (err) {
      return 'The arguments are not valid JSON: ' + err.message;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'The arguments must be a JSON object ({…}).';
    return '';
  }

  // fit sizes an editor's text box to its text, so that no line of what
  // an edit approves is out of view, and says how many lines it holds
  // (red team AG F3: a 3-row box hid the rest of a script).
  function fit(editor) {
    const ta = editor.querySelector('.edit-text');
    const lines = ta.value.split('\n').length;
    ta.rows = Math.max(lines, 1);
    ta.style.height = 'auto';
    ta.style.height = (ta.scrollHeight + ta.offsetHeight - ta.clientHeight) + 'px';
    editor.querySelector('.edit-lines').textContent =
      '(' + lines + (lines === 1 ? ' line' : ' lines') + ', all shown: read them all before you approve)';
  }

  function showError(editor, text) {
    const el = editor.querySelector('.edit-error');
    el.textContent = text;
    el.hidden = text === '';
    editor.querySelector('.edit-text').setAttribute('aria-invalid', text === '' ? 'false' : 'true');
  }

  function showReply(card, cls, text) {
    const reply = (document.getElementById('q-' + card.dataset.id) || card).querySelector('.reply');
    reply.className = 'reply ' + cls;
    reply.textContent = text;
  }

  async function send(card, editor, btn) {
    const why = problem(editor);
    showError(editor, why);
    if (why) {
      editor.querySelector('.edit-text').focus();
      return;
    }
    const fb = card.querySelector('.feedback');
    btn.disabled = true;
    showReply(card, 'pending', 'Sending…');
    try {
      const res = await fetch('/api/respond', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify({
          request_id: card.dataset.id,
          digest: card.dataset.digest,
          action: 'approve',
          feedback: fb ? fb.value : '',
          edit: editor.querySelector('.edit-text').value,
        }),
      });
      if (res.status === 401) {
        location.assign('/login');
        return;
      }
      const body = await res.json().catch(() => ({}));
      if (!res.ok) {
        const msg = (body.error && body.error.message) || 'HTTP ' + res.status;
        showError(editor, msg);
        showReply(card, 'error', msg);
      } else {
        // Refused by the brokers (the policy denies the changed call): the
        // question stays open and the editor with it.
        showReply(card, body.applied ? 'ok' : 'warn', body.message);
      }
    } catch (err) {
      showReply(card, 'error', 'Network error: ' + err.message);
    } finally {
      btn.disabled = false;
    }
  }

  list.addEventListener('click', (e) => {
    const card = e.target.closest('.card');
    if (!card) return;
    const editor = card.querySelector('.editor');
    if (!editor) return;
    if (e.target.closest('[data-edit-open]')) {
      editor.hidden = false;
      fit(editor);
      editor.querySelector('.edit-text').focus();
      // app.js turns the card's other approving buttons off while the
      // editor is open, and back on when it closes.
      card.dispatchEvent(new CustomEvent('signoff:editor', { bubbles: true }));
    } else if (e.target.closest('[data-edit-cancel]')) {
      editor.hidden = true;
      showError(editor, '');
      card.dispatchEvent(new CustomEvent('signoff:editor', { bubbles: true }));
    } else {
      const btn = e.target.closest('[data-edit-send]');
      if (btn && !btn.disabled) send(card, editor, btn);
    }
  });

  list.addEventListener('input', (e) => {
    const editor = e.target.closest('.editor');
    if (!editor) return;
    fit(editor);
    if (!editor.querySelector('.edit-error').hidden) showError(editor, problem(editor));
  });
})();

// Signoff approver page: links to one question (#q-<request id>, the link
// a pager sends). The fragment never reaches the server, so:
//
//   - on the sign-in page, it is copied into the password form's "next"
//     field and the provider link's next parameter ("/#q-<id>"), which the
//     server checks (the page itself, nothing else) and redirects to after
//     the sign-in;
//   - on the page, the question's card is scrolled to and highlighted, or,
//     when it is not open, a notice says so; a card that arrives later
//     (the page was still connecting) is highlighted then.
(() => {
  'use strict';

  const prefix = '#q-';

  // targetID is the card's element id for the address's fragment, or ''.
  function targetID() {
    const h = location.hash;
    if (!h.startsWith(prefix) || h.length === prefix.length) return '';
    try {
      return decodeURIComponent(h.slice(1));
    } catch {
      return ''; // a malformed escape names no card
    }
  }

  function signIn(form) {
    const next = form.querySelector('input[name="next"]');
    if (!next || (next.value !== '' && next.value !== '/')) return;
    if (targetID()) next.value = '/' + location.hash;
  }

  // The provider's sign-in is a link (/login/oidc?next=…): its next the
  // same way.
  function signInLink(a) {
    const u = new URL(a.href, location.href);
    const next = u.searchParams.get('next');
    if ((next !== null && next !== '' && next !== '/') || !targetID()) return;
    u.searchParams.set('next', '/' + location.hash);
    a.href = u.pathname + u.search;
  }

  function page(list) {
    let notice = null;
    let seen = null; // the card last highlighted (cards are replaced on update)

    function clearNotice() {
      if (notice) notice.remove();
      notice = null;
    }

    function show(id, scroll) {
      const card = document.getElementById(id);
      if (!card || !list.contains(card)) return false;
      clearNotice();
      card.classList.add('deeplinked');
      // The card's head, not its middle: a card taller than the window
      // is read from its verdict down (red team AG F12).
      if (scroll && seen === null) card.scrollIntoView({ block: 'start' });
      seen = card;
      return true;
    }

    function follow() {
      const id = targetID();
      for (const c of list.querySelectorAll('.card.deeplinked')) c.classList.remove('deeplinked');
      seen = null;
      clearNotice();
      if (!id) return;
      if (show(id, true)) return;
      notice = document.createElement('p');
      notice.className = 'notice deeplink-missing';
      notice.setAttribute('role', 'status');
      notice.textContent = 'Question ' + id.slice(2) + ' is not open: it was answered, ' +
        'withdrawn or expired, or it is not for your teams.';
      list.before(notice);
    }

    // A card added or replaced (an update, the re-fetch after the event
    // stream reconnects) keeps its highlight; one that arrives late is
    // scrolled to.
    new MutationObserver(() => {
      const id = targetID();
      if (id) show(id, true);
    }).observe(list, { childList: true });

    window.addEventListener('hashchange', follow);
    follow();
    recaps(list);
  }

  // recaps shows a card's verdict again right above its buttons (the
  // server renders it, .recap) only while the card is taller than the
  // window: there its verdict and its buttons are not in view together
  // (red team AG F12). It is shown unless the card is known to fit.
  function recaps(list) {
    function size() {
      for (const card of list.querySelectorAll('.card')) {
        const r = card.querySelector('.recap');
        if (!r) continue;
        const own = r.hidden ? 0 : r.offsetHeight;
        r.hidden = card.offsetHeight - own <= window.innerHeight;
      }
    }
    new MutationObserver(size).observe(list, { childList: true, subtree: true });
    window.addEventListener('resize', size);
    size();
  }

  function start() {
    for (const form of document.querySelectorAll('form[action="/login"]')) signIn(form);
    for (const a of document.querySelectorAll('a[href^="/login/oidc"]')) signInLink(a);
    const list = document.getElementById('questions');
    if (list) page(list);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();

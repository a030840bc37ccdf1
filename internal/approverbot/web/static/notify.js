// Signoff approver page: telling the approver a question arrived. The open
// count goes in the title ("(3) Signoff · approvals"); questions that arrive
// while nobody looks at the page (hidden, or not focused) count as "N new"
// until the approver comes back, and raise a browser notification when the
// approver enabled them; a short chime, made with WebAudio, plays when
// they turned the sound on. app.js says what happens with DOM events
// ("signoff:question", "signoff:settled", "signoff:count", and
// "signoff:reminder" for a question that waits too long).
//
// Browsers ask for notification permission only after a click here, once;
// the choice to be notified (and to hear the chime) is kept per device in
// localStorage. Window.Notification and AudioContext are looked up when
// used, not at load.
'use strict';

(() => {
  const KEY_NOTIFY = 'signoff.notify';
  const KEY_SOUND = 'signoff.sound';
  const baseTitle = document.title;
  const notifyBtn = document.getElementById('notify');
  const soundBtn = document.getElementById('sound');
  const marker = document.getElementById('new');
  const countEl = document.getElementById('count');
  const icon = (document.querySelector('link[rel="icon"]') || {}).href;
  if (!notifyBtn || !soundBtn || !marker) return;

  // unseen are the questions that arrived while nobody looked; shown the
  // notifications this page made, by question id.
  const unseen = new Set();
  const shown = new Map();
  let open = parseInt(countEl ? countEl.textContent : '0', 10) || 0;
  let audio = null;
  let worker = null;

  const store = {
    get(k) {
      try { return window.localStorage.getItem(k); } catch (_) { return null; }
    },
    set(k, v) {
      try { window.localStorage.setItem(k, v); } catch (_) { /* private mode: not kept */ }
    },
  };

  // looking: the page is on screen and has the focus.
  const looking = () => document.visibilityState === 'visible' && document.hasFocus();

  function render() {
    document.title = open > 0 ? '(' + open + ') ' + baseTitle : baseTitle;
    marker.textContent = unseen.size + ' new';
    marker.hidden = unseen.size === 0;
  }

  // seen: the approver is back; what arrived meanwhile is no longer new.
  function seen() {
    if (!looking() || unseen.size === 0) return;
    unseen.clear();
    for (const c of document.querySelectorAll('.card.fresh')) c.classList.remove('fresh');
    render();
  }

  // Notifications.
  const supported = () => 'Notification' in window && window.isSecureContext;
  const permission = () => (supported() ? window.Notification.permission : 'unsupported');
  const enabled = () => store.get(KEY_NOTIFY) === 'on' && permission() === 'granted';

  function renderNotify() {
    const p = permission();
    notifyBtn.disabled = p === 'unsupported' || p === 'denied';
    notifyBtn.setAttribute('aria-pressed', String(enabled()));
    if (p === 'unsupported') {
      notifyBtn.textContent = 'Notifications unavailable';
      notifyBtn.title = window.isSecureContext
        ? 'This browser shows no notifications for web pages (on an iPhone or iPad: add Signoff to the Home Screen and open it from there)'
        : 'Notifications need the page over https (or on localhost)';
    } else if (p === 'denied') {
      notifyBtn.textContent = 'Notifications blocked';
      notifyBtn.title = 'This browser blocks notifications from this site: allow them in its site settings, then reload';
    } else if (enabled()) {
      notifyBtn.textContent = 'Notifications: on';
      notifyBtn.title = 'Click to stop notifications on this device';
    } else {
      notifyBtn.textContent = 'Enable notifications';
      notifyBtn.title = 'Show a notification when a question arrives while this page is in the background';
    }
  }

  // registerWorker registers the service worker that shows notifications
  // where a page may not (Chrome on Android) and focuses the page on a
  // tap.
  function registerWorker() {
    if (worker || !('serviceWorker' in navigator) || !document.body.dataset.sw) return;
    worker = navigator.serviceWorker.register(document.body.dataset.sw).catch(() => null);
  }

  notifyBtn.addEventListener('click', async () => {
    if (enabled()) {
      store.set(KEY_NOTIFY, 'off');
      renderNotify();
      return;
    }
    let p = permission();
    if (p === 'default') {
      // The browser's prompt, from this click only.
      try {
        p = await window.Notification.requestPermission();
      } catch (_) {
        p = permission();
      }
    }
    store.set(KEY_NOTIFY, p === 'granted' ? 'on' : 'off');
    if (p === 'granted') registerWorker();
    renderNotify();
  });

  // openQuestion goes to the deep link of the question a notification was
  // about, /#q-<id> (deeplink.js: its card's head scrolled to and
  // outlined, or a notice when it is gone), even when the address already
  // names it: a notification opens that question, not the page wherever
  // it was (red team AG F10).
  function openQuestion(id) {
    const hash = '#q-' + encodeURIComponent(id);
    if (location.hash === hash) history.replaceState(null, '', location.pathname + location.search);
    location.hash = hash;
  }

  // The service worker's notifications (Chrome on Android) are tapped
  // there: it asks the page to open the question.
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.addEventListener('message', (e) => {
      if (e.data && e.data.type === 'signoff-open' && typeof e.data.id === 'string') openQuestion(e.data.id);
    });
  }

  async function notify(d, again) {
    if (!enabled()) return;
    const title = (again ? 'Still waiting: ' : 'Signoff: ') + (d.tool || 'a call') + ' needs an answer';
    const opts = { body: d.summary || '', tag: 'signoff-' + d.id, icon, renotify: !!again, data: { id: d.id } };
    const old = shown.get(d.id);
    if (old) old.close();
    try {
      const n = new window.Notification(title, opts);
      n.onclick = () => {
        window.focus();
        n.close();
        openQuestion(d.id);
      };
      shown.set(d.id, n);
    } catch (_) {
      // Chrome on Android has no Notification constructor: only a
      // service worker may show one.
      const reg = worker ? await worker : null;
      if (reg) await reg.showNotification(title, opts).catch(() => {});
    }
  }

  async function unnotify(id) {
    const n = shown.get(id);
    if (n) n.close();
    shown.delete(id);
    const reg = worker ? await worker : null;
    if (reg) {
      const ns = await reg.getNotifications({ tag: 'signoff-' + id }).catch(() => []);
      for (const x of ns) x.close();
    }
  }

  // Sound: off unless turned on; a chime generated with WebAudio.
  const soundOn = () => store.get(KEY_SOUND) === 'on';

  function renderSound() {
    soundBtn.textContent = soundOn() ? 'Sound: on' : 'Sound: off';
    soundBtn.setAttribute('aria-pressed', String(soundOn()));
  }

  function chime() {
    const AC = window.AudioContext || window.webkitAudioContext;
    if (!AC) return;
    if (!audio) audio = new AC();
    if (audio.state === 'suspended') audio.resume().catch(() => {});
    const t = audio.currentTime;
    [880, 1320].forEach((freq, i) => {
      const start = t + i * 0.15;
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.type = 'sine';
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.2, start + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.14);
      osc.connect(gain);
      gain.connect(audio.destination);
      osc.start(start);
      osc.stop(start + 0.15);
    });
  }

  soundBtn.addEventListener('click', () => {
    store.set(KEY_SOUND, soundOn() ? 'off' : 'on');
    renderSound();
    // Browsers let a page play sound only once a click allowed it: this
    // one does, and lets the approver hear what to expect.
    if (soundOn()) chime();
  });

  document.addEventListener('signoff:count', (e) => {
    open = e.detail.open;
    render();
  });
  // arrived announces question d, new or a reminder of it: unseen and
  // notified unless the page is looked at, and a chime when sound is on.
  const arrived = (d, reminder) => {
    if (!looking()) {
      unseen.add(d.id);
      const card = document.getElementById('q-' + d.id);
      if (card) card.classList.add('fresh');
      notify(d, reminder);
    }
    if (soundOn()) chime();
    render();
  };
  document.addEventListener('signoff:question', (e) => {
    if (e.detail.fresh) arrived(e.detail, false);
  });
  document.addEventListener('signoff:reminder', (e) => arrived(e.detail, true));
  document.addEventListener('signoff:settled', (e) => {
    unseen.delete(e.detail.id);
    unnotify(e.detail.id);
    render();
  });
  document.addEventListener('visibilitychange', seen);
  window.addEventListener('focus', seen);
  document.addEventListener('pointerdown', seen, true);
  document.addEventListener('keydown', seen, true);

  if (enabled()) registerWorker();
  renderNotify();
  renderSound();
  render();
})();

// Signoff approver page: the service worker notify.js registers. It shows
// notifications where a page may not make them itself (Chrome on Android
// has no Notification constructor) and, when one is tapped, opens its
// question: the page comes forward at /#q-<id>, the deep link (red team AG
// F10). It caches nothing and handles no fetch: the page is always live.
'use strict';

self.addEventListener('install', () => self.skipWaiting());

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const id = event.notification.data && typeof event.notification.data.id === 'string' ? event.notification.data.id : '';
  const url = id ? '/#q-' + encodeURIComponent(id) : '/';
  event.waitUntil((async () => {
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const page of pages) {
      if ('focus' in page) {
        await page.focus();
        if (id) page.postMessage({ type: 'signoff-open', id });
        return page;
      }
    }
    return self.clients.openWindow(url);
  })());
});

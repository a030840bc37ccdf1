// Signoff approver page: the service worker notify.js registers. It shows
// notifications where a page may not make them itself (Chrome on Android
// has no Notification constructor) and brings the page forward when one is
// tapped. It caches nothing and handles no fetch: the page is always live.
'use strict';

self.addEventListener('install', () => self.skipWaiting());

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil((async () => {
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const page of pages) {
      if ('focus' in page) return page.focus();
    }
    return self.clients.openWindow('/');
  })());
});

import { Projection } from '@fleet/cqrs';
import { Doc } from '@fleet/readmodels/port';
import { Notification, toNotification } from './notification';

export const NOTIFICATIONS = 'notifications';

export type NotificationDoc = Doc & Notification & { readonly position?: number };

/**
 * Every notification, once. Insert-only: a notification is a fact, never edited; a replayed
 * event inserts the same document again, which the store treats as a no-op.
 */
export const notificationsProjection: Projection = {
  name: 'notifications',
  collections: [{ name: NOTIFICATIONS, insertOnly: true, indexes: ['position'] }],
  apply(event, writer) {
    const notification = toNotification(event);
    if (notification) {
      // `position` orders the list as recorded; it is not part of the view.
      writer.insert(NOTIFICATIONS, {
        _id: notification.id,
        ...notification,
        position: event.position,
      });
    }
  },
};

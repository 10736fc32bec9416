import { Projection } from '../../../../libs/cqrs/src';
import { Doc } from '../../../../libs/readmodels/src/port';
import { Notification, toNotification } from './notification';

export const NOTIFICATIONS = 'notifications';

export type NotificationDoc = Doc & Notification;

/**
 * Every notification, once. Insert-only: a notification is a fact, never edited; a replayed
 * event inserts the same document again, which the store treats as a no-op.
 */
export const notificationsProjection: Projection = {
  name: 'notifications',
  collections: [{ name: NOTIFICATIONS, insertOnly: true }],
  apply(event, writer) {
    const notification = toNotification(event);
    if (notification) writer.insert(NOTIFICATIONS, { _id: notification.id, ...notification });
  },
};

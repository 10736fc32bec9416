/** The notifications slice as the rest of the app sees it. */
export { NOTIFICATIONS, NotificationDoc } from './notifications.projection';
export { Notification, NotificationType, toNotification } from './notification';
export { NotificationsModule } from './notifications.module';

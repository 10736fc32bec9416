/** The audit slice as the rest of the app sees it. */
export { AuditModule } from './audit.module';

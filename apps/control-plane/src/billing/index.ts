/** The billing slice as the rest of the app sees it (the CLI's verification included). */
export { BILLING_PROJECTION, BILLING_RECORDS, billingProjection } from './billing.projection';
export { BillingAudit, BillingMismatch, auditBilling } from './billing-verify';
export { BillingModule } from './billing.module';

/**
 * The service signs deliveries with the receivers' own package (`packages/webhook-verify`), so
 * what receivers check and what the service sends cannot drift apart.
 */
export {
  signWebhook,
  verifyWebhookSignature,
  SIGNATURE_TOLERANCE_SECONDS,
  type SignatureCheck,
  type SignedRequest,
} from '../../packages/webhook-verify/src/index';

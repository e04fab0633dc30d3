-- Proof before any refund: the payment a compensation refunds is the one Stripe's own record
-- (its PaymentIntent and the Checkout Session that created it) ties to the compensation, never
-- one a supplier's event named (src/domain/payment_proof.rs). The refund step keeps it, and every
-- retry, claim and owner click uses exactly that intent and amount (compensation_steps.amount_minor,
-- currency). Times are ms since the Unix epoch, UTC.
ALTER TABLE compensation_steps ADD COLUMN payment_intent TEXT;  -- refund: the proven intent (pi_…), set once
ALTER TABLE compensation_steps ADD COLUMN proof TEXT;           -- refund: what Stripe said, one line (proven or why not)
-- Stripe's refund webhooks without a refund id known to the engine find their compensation by
-- the proven intent.
CREATE INDEX compensation_steps_by_intent ON compensation_steps(payment_intent) WHERE payment_intent IS NOT NULL;

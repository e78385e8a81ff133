-- A stored receipt is announced on commit, whoever stored it (an inbound request, the Gateway, an
-- interaction routed to a handler, a schedule's firing), so a receipt processor handles it at once
-- instead of at the next maintenance tick. A hint only: maintenance still takes anything a lost
-- notification leaves.
CREATE FUNCTION "svc_notify_integration_receipts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_integration_receipts', '');
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "integration_event_receipts_stored" AFTER INSERT ON "integration_event_receipts" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_integration_receipts"();

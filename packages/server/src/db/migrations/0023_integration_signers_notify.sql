-- The inbound receiver keeps each candidate integration's verification key (a signing secret decrypted
-- from its credential, or a public key from its provider_config) in memory, so an unsigned request costs
-- no database work. Any change to what those keys come from is announced on commit, whoever made it, and
-- every process drops its cached keys. A hint only: the cache also expires on its own.
CREATE FUNCTION "svc_notify_integration_signers"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_integration_signers', '');
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "integrations_signers_changed" AFTER INSERT OR DELETE OR UPDATE OF "kind", "state", "provider_tenant_id", "credential_secret_id", "provider_config", "provider_identity" ON "integrations" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_integration_signers"();--> statement-breakpoint
CREATE TRIGGER "secrets_signers_changed" AFTER UPDATE OR DELETE ON "secrets" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_integration_signers"();--> statement-breakpoint
CREATE TRIGGER "secret_grants_signers_changed" AFTER UPDATE OR DELETE ON "secret_grants" FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_integration_signers"();

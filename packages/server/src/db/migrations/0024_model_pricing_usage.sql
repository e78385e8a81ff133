CREATE TABLE "usage_daily" (
	"org_id" uuid NOT NULL,
	"day" date NOT NULL,
	"project_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"agent_profile_id" uuid,
	"actor_id" uuid,
	"configured_model_id" uuid NOT NULL,
	"model_calls" bigint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cache_read_input_tokens" bigint NOT NULL,
	"cache_write_input_tokens" bigint NOT NULL,
	"reasoning_output_tokens" bigint NOT NULL,
	"cost_micro_usd" bigint NOT NULL,
	CONSTRAINT "usage_daily_key" UNIQUE NULLS NOT DISTINCT("org_id","day","project_id","agent_id","agent_profile_id","actor_id","configured_model_id")
);
--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD COLUMN "input_per_mtok" numeric(18, 6);--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD COLUMN "output_per_mtok" numeric(18, 6);--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD COLUMN "cache_read_per_mtok" numeric(18, 6);--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD COLUMN "cache_write_per_mtok" numeric(18, 6);--> statement-breakpoint
ALTER TABLE "model_call_contexts" ADD COLUMN "cost_micro_usd" bigint;--> statement-breakpoint
ALTER TABLE "usage_daily" ADD CONSTRAINT "usage_daily_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "configured_model_revisions" ADD CONSTRAINT "configured_model_revisions_pricing" CHECK ((("configured_model_revisions"."input_per_mtok" IS NULL) = ("configured_model_revisions"."output_per_mtok" IS NULL))
        AND ("configured_model_revisions"."input_per_mtok" IS NOT NULL OR ("configured_model_revisions"."cache_read_per_mtok" IS NULL AND "configured_model_revisions"."cache_write_per_mtok" IS NULL))
        AND coalesce("configured_model_revisions"."input_per_mtok" >= 0 AND "configured_model_revisions"."output_per_mtok" >= 0, true)
        AND coalesce("configured_model_revisions"."cache_read_per_mtok" >= 0, true) AND coalesce("configured_model_revisions"."cache_write_per_mtok" >= 0, true));
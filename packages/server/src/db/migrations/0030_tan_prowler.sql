ALTER TABLE "usage_daily" DROP CONSTRAINT "usage_daily_key";--> statement-breakpoint
ALTER TABLE "agent_inputs" ADD COLUMN "api_key_id" uuid;--> statement-breakpoint
ALTER TABLE "usage_daily" ADD COLUMN "api_key_id" uuid;--> statement-breakpoint
ALTER TABLE "usage_daily" ADD CONSTRAINT "usage_daily_key" UNIQUE NULLS NOT DISTINCT("org_id","day","project_id","agent_id","agent_profile_id","actor_id","api_key_id","configured_model_id");
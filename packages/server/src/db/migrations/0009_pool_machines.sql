ALTER TABLE "machines" ADD COLUMN "delete_after_idle_minutes" integer;--> statement-breakpoint
ALTER TABLE "machines" ADD COLUMN "create_tool_call_id" uuid;--> statement-breakpoint
CREATE INDEX "machines_pool_lifecycle_idx" ON "machines" USING btree ("lifecycle_state","created_at") WHERE "machines"."source_kind" = 'pool' AND "machines"."deleted_at" IS NULL;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_idle" CHECK ("machines"."delete_after_idle_minutes" IS NULL OR "machines"."delete_after_idle_minutes" >= 1);
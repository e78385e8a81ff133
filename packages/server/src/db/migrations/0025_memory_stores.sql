CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"memory_store_id" uuid NOT NULL,
	"path" text NOT NULL,
	"content" text NOT NULL,
	"digest" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"current_version" integer NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, translate(path, '/.', '  ') || ' ' || left(content, 100000))) STORED NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "memories_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "memories_store_path" UNIQUE("memory_store_id","path")
);
--> statement-breakpoint
CREATE TABLE "memory_stores" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"writable" boolean DEFAULT true NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"memory_count" integer DEFAULT 0 NOT NULL,
	"size_bytes" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "memory_stores_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "memory_stores_project_name" UNIQUE("project_id","name"),
	CONSTRAINT "memory_stores_counts" CHECK ("memory_stores"."memory_count" >= 0 AND "memory_stores"."size_bytes" >= 0)
);
--> statement-breakpoint
CREATE TABLE "memory_versions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"memory_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"content" text,
	"digest" text,
	"size_bytes" integer NOT NULL,
	"writer_kind" text NOT NULL,
	"writer_id" uuid NOT NULL,
	"agent_id" uuid,
	"tool_call_id" uuid,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "memory_versions_memory_version" UNIQUE("memory_id","version"),
	CONSTRAINT "memory_versions_writer_kind" CHECK ("memory_versions"."writer_kind" IN ('user', 'agent', 'api_key')),
	CONSTRAINT "memory_versions_delete_shape" CHECK (("memory_versions"."content" IS NULL) = ("memory_versions"."digest" IS NULL))
);
--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_org_id_memory_store_id_memory_stores_org_id_id_fk" FOREIGN KEY ("org_id","memory_store_id") REFERENCES "public"."memory_stores"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_stores" ADD CONSTRAINT "memory_stores_org_id_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_versions" ADD CONSTRAINT "memory_versions_org_id_memory_id_memories_org_id_id_fk" FOREIGN KEY ("org_id","memory_id") REFERENCES "public"."memories"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memories_search_idx" ON "memories" USING gin ("search");--> statement-breakpoint
CREATE INDEX "memory_stores_project_created_idx" ON "memory_stores" USING btree ("project_id","created_at","id");
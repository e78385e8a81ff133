CREATE TABLE "mcp_registry_servers" (
	"name" text PRIMARY KEY NOT NULL,
	"title" text,
	"description" text NOT NULL,
	"version" text NOT NULL,
	"website_url" text,
	"status" text NOT NULL,
	"registry_updated_at" timestamp with time zone NOT NULL,
	"remotes" jsonb NOT NULL,
	"icons" jsonb NOT NULL,
	"name_words" text NOT NULL,
	"title_words" text NOT NULL,
	"description_words" text NOT NULL,
	"url_words" text NOT NULL,
	"remote_keys" text[] NOT NULL,
	"pass" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_registry_sync" (
	"id" integer PRIMARY KEY NOT NULL,
	"source_url" text,
	"pass" integer NOT NULL,
	"full" boolean NOT NULL,
	"open" boolean NOT NULL,
	"cursor" text,
	"updated_since" timestamp with time zone,
	"last_pass_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "mcp_registry_servers_remote_keys" ON "mcp_registry_servers" USING gin ("remote_keys");--> statement-breakpoint
CREATE INDEX "mcp_registry_servers_name_c" ON "mcp_registry_servers" USING btree ("name" COLLATE "C");
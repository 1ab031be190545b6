/** Short names for the wire types generated from `openapi.json` (see `schema.d.ts`). */

import type { components } from "./schema";

export type Schemas = components["schemas"];

export type Agent = Schemas["Agent"];
export type AgentWrite = Schemas["AgentWrite"];
export type AgentContext = Schemas["AgentContext"];
export type ShareConfig = Schemas["ShareConfig"];
export type ResolvedContext = Schemas["ResolvedContext"];
export type ModelCatalog = Schemas["ModelCatalog"];
export type ModelProvider = Schemas["ModelProvider"];
export type ToolDescription = Schemas["ToolDescription"];
export type User = Schemas["User"];
export type ApiToken = Schemas["ApiToken"];
export type Thread = Schemas["Thread"];
export type Message = Schemas["Message"];
export type Run = Schemas["Run"];
export type RunDetail = Schemas["RunDetail"];
export type RunStatus = Schemas["RunStatus"];
export type RunErrorCode = Schemas["RunErrorCode"];
export type Usage = Schemas["Usage"];
export type SubagentRun = Schemas["SubagentRun"];
export type SkillView = Schemas["SkillView"];
export type SkillSource = Schemas["SkillSourceView"];
export type SkillFile = Schemas["SkillFileInfo"];
export type OfferedSkill = Schemas["OfferedSkill"];
export type McpServerView = Schemas["McpServerView"];
export type McpServerWrite = Schemas["McpServerWrite"];
export type McpServerPatch = Schemas["McpServerPatch"];
export type McpTransportView = Schemas["TransportView"];
export type McpTransportWrite = Schemas["TransportWrite"];
export type McpValueView = Schemas["ValueView"];
export type McpCheckView = Schemas["McpCheckView"];
export type McpToolView = Schemas["McpToolView"];

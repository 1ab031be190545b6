/** Model providers and the server default model (`/api/model-providers`, `/api/model-settings`; admins). */

import { api, unwrap } from ".";
import type { Schemas } from "./types";

export type ProviderView = Schemas["ModelProviderView"];
export type ProviderWrite = Schemas["ModelProviderWrite"];
export type TestResult = Schemas["TestResult"];
export type ProbeError = Schemas["ProbeError"];
export type ListUnsavedRequest = Schemas["ListUnsavedRequest"];
export type ModelSettings = Schemas["ModelSettingsView"];

const byId = (id: string) => ({ params: { path: { id } } });

export const listProviders = () => unwrap(api.GET("/api/model-providers"));
export const getProvider = (id: string) => unwrap(api.GET("/api/model-providers/{id}", byId(id)));
export const createProvider = (body: ProviderWrite) => unwrap(api.POST("/api/model-providers", { body }));
export const updateProvider = (id: string, body: ProviderWrite) =>
  unwrap(api.PUT("/api/model-providers/{id}", { ...byId(id), body }));
export const patchProvider = (id: string, body: Schemas["ModelProviderPatch"]) =>
  unwrap(api.PATCH("/api/model-providers/{id}", { ...byId(id), body }));
export const deleteProvider = (id: string) => unwrap(api.DELETE("/api/model-providers/{id}", byId(id)));
export const refreshModels = (id: string) =>
  unwrap(api.POST("/api/model-providers/{id}/refresh-models", byId(id)));
/** Tests a stored provider: `model`, or with none, the first model it lists (the answer carries the list). */
export const testProvider = (id: string, model?: string) =>
  unwrap(api.POST("/api/model-providers/{id}/test", { ...byId(id), body: model ? { model } : {} }));
/** Tests settings not saved yet: `model`, or with none, the first of `models`, or of the provider's list. */
export const testUnsaved = (body: Schemas["TestUnsavedRequest"]) =>
  unwrap(api.POST("/api/model-providers/test", { body }));
/** The models a provider lists, asked with settings not saved yet; nothing is stored. */
export const listModelsUnsaved = (body: ListUnsavedRequest) =>
  unwrap(api.POST("/api/model-providers/list-models", { body }));
export const getModelSettings = () => unwrap(api.GET("/api/model-settings"));
export const setDefaultModel = (defaultModel: string | null) =>
  unwrap(api.PUT("/api/model-settings", { body: { default_model: defaultModel } }));

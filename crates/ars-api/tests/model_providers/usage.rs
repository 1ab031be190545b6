//! Usage (`GET /api/usage`): tokens rolled up per day, agent, subagent, model and user, with
//! the cost where the model's provider has prices; the caller's own runs, every user's for an
//! admin who asks.

use super::*;

#[tokio::test]
async fn usage_rolls_up_tokens_per_day_agent_model_and_costs_what_the_provider_charges() {
    let server = FakeOpenAi::start("A", Some(KEY_A), &["m"]).await;
    let app = fast_app().await;
    // $2 per million prompt tokens, $10 per million completion tokens.
    let mut body = provider("paid", &server.base_url, Some(KEY_A));
    body["prices"] = json!({"input": 2.0, "output": 10.0});
    let view = create(&app, body).await;
    assert_eq!(view["prices"], json!({"input": 2.0, "output": 10.0}));
    agent(
        &app,
        "paidbot",
        Some(json!({"provider": "paid", "name": "m"})),
    )
    .await;
    // The fake server reports 5 prompt and 3 completion tokens per call.
    for _ in 0..2 {
        assert_eq!(run(&app, "paidbot").await["status"], "success");
    }
    app.scripted_agent(
        &app.admin,
        "freebot",
        json!([{"text": "ok", "usage": {"prompt_tokens": 100, "completion_tokens": 20}}]),
    )
    .await;
    assert_eq!(run(&app, "freebot").await["status"], "success");

    let r = app.get("/api/usage", &app.admin).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let report = &r.body;
    assert_eq!(report["total"]["runs"], 3, "{report}");
    assert_eq!(report["total"]["total_tokens"], 2 * 8 + 120);
    assert_eq!(report["all_users"], false);
    let by_day = report["by_day"].as_array().unwrap();
    assert_eq!(by_day.len(), 30, "the last 30 days, empty ones too");
    let today = by_day.last().unwrap();
    assert_eq!(today["runs"], 3, "{today}");

    let model = |key: &str| {
        report["by_model"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("no {key} in {report}"))
    };
    let paid = model("paid/m");
    assert_eq!(
        (
            paid["prompt_tokens"].clone(),
            paid["completion_tokens"].clone()
        ),
        (json!(10), json!(6))
    );
    // 10 × 2 / 1e6 + 6 × 10 / 1e6
    let cost = paid["cost"].as_f64().unwrap();
    assert!((cost - 0.00008).abs() < 1e-12, "{paid}");
    let free = model("scripted/demo");
    assert!(free.get("cost").is_none(), "no price, no cost: {free}");
    assert_eq!(free["unpriced_tokens"], 120);
    assert_eq!(
        report["by_agent"][0]["label"], "Scripted freebot",
        "most tokens first: {report}"
    );
    assert!(report["by_subagent"].as_array().unwrap().is_empty());

    // Another user sees only their own; only admins see everyone's.
    let (_, user) = app.user("someone").await;
    let r = app.get("/api/usage", &user).await;
    assert_eq!(r.body["total"]["runs"], 0, "{}", r.body);
    let r = app.get("/api/usage?all=true", &user).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = app.get("/api/usage?all=true", &app.admin).await;
    assert_eq!(r.body["by_user"][0]["label"], "admin", "{}", r.body);

    // The span.
    // `from` after `to`: a span without days.
    let r = app
        .get("/api/usage?from=2026-02-01&to=2026-01-01", &app.admin)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["total"]["runs"], 0, "{}", r.body);
    assert!(r.body["by_day"].as_array().unwrap().is_empty());
    // A span longer than a year lists only the days that have runs.
    let r = app.get("/api/usage?from=2000-01-01", &app.admin).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["by_day"].as_array().unwrap().len(), 1, "{}", r.body);
    assert_eq!(r.body["total"]["runs"], 3);
    let r = app
        .get("/api/usage?from=-99999-01-01&to=+99999-12-31", &app.admin)
        .await;
    assert!(
        r.status.is_success() || r.status == StatusCode::BAD_REQUEST,
        "{}",
        r.body
    );
    let r = app.get("/api/usage?from=yesterday", &app.admin).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);

    // Prices are checked, and null removes them.
    let id = view["id"].as_str().unwrap();
    let r = app
        .patch(
            &format!("/api/model-providers/{id}"),
            &app.admin,
            json!({"prices": {"input": -1.0, "output": 1.0}}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["error"]["params"]["field"].clone()),
        (StatusCode::UNPROCESSABLE_ENTITY, json!("prices.input")),
        "{}",
        r.body
    );
    let r = app
        .patch(
            &format!("/api/model-providers/{id}"),
            &app.admin,
            json!({"prices": null}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.get("prices").is_none(), "{}", r.body);
}

#[tokio::test]
async fn a_subagents_tokens_are_counted_under_the_subagent() {
    let app = fast_app().await;
    app.agent(
        &app.admin,
        json!({"slug": "helper", "name": "Helper", "backend_id": "SubAgentBackend",
               "config_json": {"context": {"model": {"provider": "scripted", "name": "demo",
                 "script": [{"text": "done", "usage": {"prompt_tokens": 7, "completion_tokens": 1}}]}}}}),
    )
    .await;
    app.scripted_agent(
        &app.admin,
        "boss",
        json!([
            {"tool_calls": [{"name": "task", "arguments": {"subagent_slug": "helper", "description": "help"}}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
            {"text": "thanks", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
        ]),
    )
    .await;
    let done = run(&app, "boss").await;
    assert_eq!(done["status"], "success", "{done}");
    let r = app.get("/api/usage", &app.admin).await;
    let sub = &r.body["by_subagent"];
    assert_eq!(sub[0]["label"], "Helper", "{}", r.body);
    assert_eq!(sub[0]["total_tokens"], 8);
    assert_eq!(r.body["by_agent"][0]["total_tokens"], 4, "{}", r.body);
}

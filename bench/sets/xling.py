"""en<->zh set: short notes in one language, queries in the other, plus same-language paraphrases and
two exact names; each query has exactly one relevant note (hand-written)."""

from __future__ import annotations

DOCS = {
    "catl": "宁德时代是全球最大的动力电池制造商，主要生产锂离子电池，客户包括多家电动汽车厂商。",
    "solid": "固态电池使用固态电解质，能量密度更高，也更安全，但量产成本仍然很高。",
    "pv": "光伏产业链从多晶硅料开始，经过硅片、电池片，最后封装成组件。",
    "weather": "明天会下大雨，出门记得带伞。",
    "pasta": "Boil the spaghetti in salted water for nine minutes, then toss with olive oil and garlic.",
    "run": "I ran ten kilometres in the park this morning and my knee felt fine.",
    "k8s": "The Kubernetes cluster autoscaler adds nodes when pods are pending for too long.",
    "pg": "We migrated the Postgres database to version 16 and rebuilt all indexes afterwards.",
    "review": "代码评审时先看测试是否覆盖了边界情况，再看命名和可读性。",
    "pref": "用户喜欢简短直接的回答，不要营销式的表述。",
    "coffee": "The user drinks two cups of black coffee every morning and avoids sugar.",
    "flight": "下周三乘坐早上八点的航班去上海参加技术大会。",
    "budget": "The latency budget for the search endpoint is fifty milliseconds at the 95th percentile.",
    "cat": "我家的猫叫小白，喜欢晚上在窗台上睡觉。",
    "guitar": "Practising guitar chords for twenty minutes a day improved my finger strength.",
    "tax": "个人所得税年度汇算需要在六月底之前完成申报。",
    "rust": "Rust's borrow checker rejects two mutable references to the same value at once.",
    "garden": "阳台上种的番茄开始结果了，需要每天浇水。",
    "ev": "Electric vehicle sales in Europe grew strongly last year thanks to subsidies.",
    "hydrogen": "氢燃料电池汽车的加氢站数量仍然很少，限制了推广。",
}
QUERIES = [
    ("which company makes the most batteries for electric cars", "catl"),
    ("safer battery with solid electrolyte", "solid"),
    ("solar panel supply chain from silicon to modules", "pv"),
    ("will it rain tomorrow, take an umbrella", "weather"),
    ("怎么煮意大利面", "pasta"),
    ("早上在公园跑了多远", "run"),
    ("集群自动扩容 节点", "k8s"),
    ("数据库升级到16版本", "pg"),
    ("what to check first in a code review", "review"),
    ("the user prefers short direct answers", "pref"),
    ("用户每天喝几杯咖啡", "coffee"),
    ("flight to Shanghai for the tech conference", "flight"),
    ("搜索接口的延迟预算", "budget"),
    ("what is my cat called", "cat"),
    ("练吉他 和弦", "guitar"),
    ("deadline for the annual income tax filing", "tax"),
    ("借用检查器 可变引用", "rust"),
    ("tomatoes on the balcony need watering", "garden"),
    ("欧洲电动车销量增长", "ev"),
    ("hydrogen fuel cell cars lack refuelling stations", "hydrogen"),
    ("宁德时代", "catl"),
    ("Kubernetes autoscaler", "k8s"),
]


def generate() -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    files = {f"digest/wiki/{k}.md": f"# {k}\n{t}\n" for k, t in DOCS.items()}
    return files, [(q, {f"digest/wiki/{g}.md"}) for q, g in QUERIES]

"""Synthetic advisors and reviews over the real schools and majors of data/names.yaml, made deterministically (a
fixed seed) and loaded into the store once (`ensure_catalog`).

No advisor is a real person: a name is a family name drawn from a list of common ones and a given name put together
from one or two characters drawn from a pool, so names repeat only by chance, and every fact about an advisor
(title, directions, traits, papers) and every review is drawn here. The site's footer says so.
An advisor's traits decide their reviews: a 温和 advisor's reviews score 师生关系 high and say so, a 紧张 one's score
科研经费 low, a 产业型 one's 学生前途 high; an advisor's ratings are their reviews' averages.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from typing import Any

from pypinyin import Style, lazy_pinyin
from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from ._catalog import advisor_majors, advisors, catalog_meta, create_tables, majors, reviews, schools
from ._public_names import Major, Names, School, names

__all__ = [
    "DIRECTIONS",
    "FUNDING",
    "GENERATOR_VERSION",
    "PERSONALITIES",
    "RESEARCH_STYLES",
    "SEED",
    "TITLES",
    "Major",
    "Names",
    "School",
    "directions_for",
    "ensure_catalog",
    "generate",
    "names",
]

SEED = 20260112
GENERATOR_VERSION = "1"
"""Bumped when the generator changes what it makes: a store holding another version is loaded again."""

TITLES = {"教授": "Professor", "副教授": "Associate Professor", "讲师": "Lecturer", "研究员": "Research Fellow"}
PERSONALITIES = {"温和": "gentle", "严格": "strict", "放养": "hands-off", "负责": "responsible"}
RESEARCH_STYLES = {"理论型": "theoretical", "工程型": "engineering", "产业型": "industry-oriented"}
FUNDING = {"充足": "ample", "一般": "moderate", "紧张": "tight"}

DIRECTIONS: dict[str, dict[str, str]] = {
    "哲学": {
        "马克思主义哲学": "Marxist philosophy",
        "中国哲学": "Chinese philosophy",
        "外国哲学": "Western philosophy",
        "逻辑学": "Logic",
        "伦理学": "Ethics",
        "科学技术哲学": "Philosophy of science and technology",
    },
    "理论经济学": {
        "政治经济学": "Political economy",
        "宏观经济学": "Macroeconomics",
        "微观经济理论": "Microeconomic theory",
        "经济史": "Economic history",
        "人口资源与环境经济学": "Population, resource and environmental economics",
        "发展经济学": "Development economics",
    },
    "应用经济学": {
        "金融学": "Finance",
        "国际贸易": "International trade",
        "产业经济学": "Industrial economics",
        "财政学": "Public finance",
        "区域经济学": "Regional economics",
        "数量经济学": "Quantitative economics",
    },
    "法学": {
        "民商法学": "Civil and commercial law",
        "刑法学": "Criminal law",
        "宪法与行政法学": "Constitutional and administrative law",
        "国际法学": "International law",
        "经济法学": "Economic law",
        "知识产权法": "Intellectual property law",
    },
    "教育学": {
        "教育技术": "Educational technology",
        "课程与教学论": "Curriculum and instruction",
        "高等教育学": "Higher education",
        "比较教育学": "Comparative education",
        "学前教育": "Early childhood education",
        "教育政策": "Education policy",
    },
    "心理学": {
        "认知心理学": "Cognitive psychology",
        "发展心理学": "Developmental psychology",
        "社会心理学": "Social psychology",
        "临床心理学": "Clinical psychology",
        "认知神经科学": "Cognitive neuroscience",
        "心理测量": "Psychometrics",
    },
    "中国语言文学": {
        "古代文学": "Classical Chinese literature",
        "现当代文学": "Modern and contemporary literature",
        "语言学及应用语言学": "Linguistics and applied linguistics",
        "比较文学": "Comparative literature",
        "文艺学": "Literary theory",
        "汉语言文字学": "Chinese philology",
    },
    "外国语言文学": {
        "英语语言文学": "English language and literature",
        "翻译学": "Translation studies",
        "外国语言学": "Foreign linguistics",
        "日语语言文学": "Japanese language and literature",
        "跨文化交际": "Intercultural communication",
        "二语习得": "Second language acquisition",
    },
    "数学": {
        "代数与数论": "Algebra and number theory",
        "偏微分方程": "Partial differential equations",
        "概率论": "Probability theory",
        "计算数学": "Computational mathematics",
        "运筹学与优化": "Operations research and optimisation",
        "几何与拓扑": "Geometry and topology",
    },
    "物理学": {
        "凝聚态物理": "Condensed matter physics",
        "量子信息": "Quantum information",
        "粒子物理": "Particle physics",
        "光学": "Optics",
        "理论物理": "Theoretical physics",
        "天体物理": "Astrophysics",
    },
    "化学": {
        "有机化学": "Organic chemistry",
        "无机化学": "Inorganic chemistry",
        "物理化学": "Physical chemistry",
        "分析化学": "Analytical chemistry",
        "高分子化学": "Polymer chemistry",
        "催化化学": "Catalysis",
    },
    "生物学": {
        "分子生物学": "Molecular biology",
        "细胞生物学": "Cell biology",
        "遗传学": "Genetics",
        "生物信息学": "Bioinformatics",
        "神经生物学": "Neurobiology",
        "生态学": "Ecology",
    },
    "统计学": {
        "数理统计": "Mathematical statistics",
        "生物统计": "Biostatistics",
        "统计学习": "Statistical learning",
        "贝叶斯统计": "Bayesian statistics",
        "时间序列分析": "Time series analysis",
        "因果推断": "Causal inference",
    },
    "机械工程": {
        "机器人": "Robotics",
        "智能制造": "Intelligent manufacturing",
        "机械设计": "Mechanical design",
        "精密加工": "Precision machining",
        "流体传动与控制": "Fluid power and control",
        "微纳制造": "Micro/nano manufacturing",
    },
    "电气工程": {
        "电力系统": "Power systems",
        "电力电子": "Power electronics",
        "新能源发电": "Renewable power generation",
        "高电压技术": "High-voltage engineering",
        "电机与电器": "Electric machines",
        "智能电网": "Smart grids",
    },
    "电子科学与技术": {
        "集成电路设计": "Integrated circuit design",
        "微电子器件": "Microelectronic devices",
        "射频电路": "RF circuits",
        "光电子": "Optoelectronics",
        "半导体材料": "Semiconductor materials",
        "电磁场与微波": "Electromagnetics and microwaves",
    },
    "信息与通信工程": {
        "无线通信": "Wireless communications",
        "信号处理": "Signal processing",
        "图像处理": "Image processing",
        "通信网络": "Communication networks",
        "雷达信号处理": "Radar signal processing",
        "语音信号处理": "Speech signal processing",
    },
    "控制科学与工程": {
        "控制理论": "Control theory",
        "模式识别": "Pattern recognition",
        "导航制导与控制": "Guidance, navigation and control",
        "智能控制": "Intelligent control",
        "系统工程": "Systems engineering",
        "无人系统": "Unmanned systems",
    },
    "计算机科学与技术": {
        "机器学习": "Machine learning",
        "深度学习": "Deep learning",
        "计算机视觉": "Computer vision",
        "自然语言处理": "Natural language processing",
        "计算机系统结构": "Computer architecture",
        "分布式系统": "Distributed systems",
        "数据库": "Databases",
        "理论计算机科学": "Theoretical computer science",
        "计算机图形学": "Computer graphics",
        "人机交互": "Human-computer interaction",
    },
    "土木工程": {
        "结构工程": "Structural engineering",
        "岩土工程": "Geotechnical engineering",
        "桥梁与隧道工程": "Bridge and tunnel engineering",
        "防灾减灾": "Disaster prevention",
        "市政工程": "Municipal engineering",
        "智能建造": "Intelligent construction",
    },
    "化学工程与技术": {
        "化学工艺": "Chemical process engineering",
        "生物化工": "Biochemical engineering",
        "化工过程模拟": "Process simulation",
        "能源化工": "Energy chemical engineering",
        "应用化学": "Applied chemistry",
        "分离工程": "Separation engineering",
    },
    "环境科学与工程": {
        "水污染控制": "Water pollution control",
        "大气污染控制": "Air pollution control",
        "固体废物处理": "Solid waste treatment",
        "环境规划与管理": "Environmental planning",
        "环境化学": "Environmental chemistry",
        "碳中和": "Carbon neutrality",
    },
    "生物医学工程": {
        "医学影像": "Medical imaging",
        "生物材料": "Biomaterials",
        "生物传感器": "Biosensors",
        "康复工程": "Rehabilitation engineering",
        "神经工程": "Neural engineering",
        "医疗器械": "Medical devices",
    },
    "软件工程": {
        "软件测试": "Software testing",
        "程序分析": "Program analysis",
        "软件架构": "Software architecture",
        "形式化方法": "Formal methods",
        "智能软件工程": "AI for software engineering",
        "云原生": "Cloud-native systems",
    },
    "网络空间安全": {
        "密码学": "Cryptography",
        "系统安全": "Systems security",
        "网络安全": "Network security",
        "隐私保护": "Privacy protection",
        "人工智能安全": "AI security",
        "区块链": "Blockchain",
    },
    "基础医学": {
        "免疫学": "Immunology",
        "病理学": "Pathology",
        "药理学": "Pharmacology",
        "生理学": "Physiology",
        "病原生物学": "Pathogen biology",
        "医学遗传学": "Medical genetics",
    },
    "临床医学": {
        "内科学": "Internal medicine",
        "外科学": "Surgery",
        "肿瘤学": "Oncology",
        "神经病学": "Neurology",
        "儿科学": "Paediatrics",
        "影像医学": "Radiology",
    },
    "管理科学与工程": {
        "运营管理": "Operations management",
        "供应链管理": "Supply chain management",
        "信息管理": "Information management",
        "决策分析": "Decision analysis",
        "项目管理": "Project management",
        "金融工程": "Financial engineering",
    },
    "工商管理": {
        "市场营销": "Marketing",
        "会计学": "Accounting",
        "企业管理": "Business management",
        "人力资源管理": "Human resource management",
        "财务管理": "Financial management",
        "创新创业": "Innovation and entrepreneurship",
    },
}
"""Research directions per major: second-level fields people name (zh → en)."""

_FAMILY = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
_GIVEN_M = "伟强磊军勇杰涛斌浩鹏宇峰辉明刚健志坚亮海波晨昊博文然凯铭哲睿航远帆林松庆华正建国永新宏翔"
_GIVEN_F = "芳娜敏静丽艳娟霞燕玲婷雪琳颖洁慧倩悦欣怡晴雯璐佳瑶婧妍琪茜蕾岚薇媛梅兰月宁"
_FAMOUS = frozenset(
    {
        "施一公",
        "姚期智",
        "潘建伟",
        "饶毅",
        "颜宁",
        "张益唐",
        "丘成桐",
        "杨振宁",
        "李政道",
        "袁隆平",
        "屠呦呦",
        "钟南山",
        "王选",
        "钱学森",
        "华罗庚",
        "陈景润",
        "朱棣文",
        "周其凤",
        "许智宏",
        "林建华",
    }
)
"""Names of well-known Chinese academics the generator never gives (a check, not a proof that no name is real)."""


def directions_for(major: str) -> dict[str, str]:
    """The research directions of `major` (zh → en); empty for a major the data does not know."""
    return dict(DIRECTIONS.get(major, {}))


# ---- the review text: fragments per dimension and score, in both languages ------------------------------------------

_ACADEMIC = {
    5: ("学术水平很高，领域内很有影响力", "a leading scholar with real influence in the field"),
    4: ("学术功底扎实，指导论文很到位", "solid scholarship, good guidance on papers"),
    3: ("学术水平中规中矩", "academically average"),
    2: ("近几年产出不多", "not much published in recent years"),
    1: ("学术上基本帮不上忙", "little academic help"),
}
_FUNDING = {
    5: ("经费非常充足，设备和出差都不用愁", "ample funding: equipment and travel are never a problem"),
    4: ("经费比较充足，补助按时发", "good funding, stipends paid on time"),
    3: ("经费一般，够用", "moderate funding, enough"),
    2: ("经费有点紧张，补助偏少", "funding is a bit tight, small stipends"),
    1: ("经费很紧张，买设备要自己想办法", "very tight funding: you find your own equipment"),
}
_RELATIONSHIP = {
    "温和": ("老师很温和，说话客气，很少批评人", "very gentle, polite, rarely criticises"),
    "严格": ("要求很严格，组会压力不小，但能学到东西", "very strict, group meetings are tough, but you learn a lot"),
    "放养": ("基本放养，自由度很高，需要自己有规划", "hands-off: lots of freedom, you need your own plan"),
    "负责": (
        "非常负责，论文逐字修改，有问题随时找得到",
        "very responsible: edits papers line by line, always reachable",
    ),
}
_STYLE = {
    "理论型": ("偏理论研究，推导多", "theory-oriented, lots of derivations"),
    "工程型": ("偏工程实践，项目和代码多", "engineering-oriented, many projects and much code"),
    "产业型": ("和企业合作多，横向项目多", "works closely with industry, many industry projects"),
}
_FUTURE = {
    5: ("毕业去向很好，推荐信有分量", "graduates land very well; a recommendation that counts"),
    4: ("学生毕业出路不错", "students find good positions"),
    3: ("毕业去向一般", "average job prospects"),
    2: ("毕业要靠自己努力", "finding a job is up to you"),
    1: ("延毕的情况比较多", "delayed graduations are common"),
}
_TAGS = {
    "温和": ("脾气好", "even-tempered"),
    "严格": ("要求严格", "demanding"),
    "放养": ("自由度高", "lots of freedom"),
    "负责": ("认真负责", "conscientious"),
    "理论型": ("理论扎实", "strong theory"),
    "工程型": ("项目多", "many projects"),
    "产业型": ("横向项目多", "industry projects"),
    "充足": ("经费充足", "well funded"),
    "紧张": ("经费紧张", "tight funding"),
}


def _clamp(score: float) -> int:
    return max(1, min(5, round(score)))


def _given(rng: random.Random, pool: str) -> str:
    return rng.choice(pool) + (rng.choice(pool) if rng.random() < 0.6 else "")


def _pinyin(name: str) -> str:
    syllables = lazy_pinyin(name, style=Style.NORMAL)
    return f"{syllables[0].capitalize()} {''.join(syllables[1:]).capitalize()}"


def generate(seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    """Every row of the catalog's tables, drawn from `seed` (the same seed, the same rows)."""
    rng = random.Random(seed)
    data = names()
    school_rows = [{"name": s.name, "en": s.en, "city": s.city, "position": i} for i, s in enumerate(data.schools)]
    major_rows = [{"name": m.name, "code": m.code, "en": m.en} for m in data.majors]
    major_names = [m.name for m in data.majors]
    advisor_rows: list[dict[str, Any]] = []
    link_rows: list[dict[str, Any]] = []
    review_rows: list[dict[str, Any]] = []
    taken: set[str] = set()
    for school in data.schools:
        offered = ["计算机科学与技术"] + rng.sample(
            [m for m in major_names if m != "计算机科学与技术"], rng.randint(7, 11)
        )
        for major in offered:
            for _ in range(rng.randint(4, 8) if major == "计算机科学与技术" else rng.randint(3, 6)):
                row, its_reviews = _advisor(rng, f"{len(advisor_rows) + 10001}", school.name, major, taken)
                advisor_rows.append(row)
                review_rows.extend(its_reviews)
                link_rows.append(
                    {"advisor_id": row["id"], "school": school.name, "major": major, "overall": row["overall"]}
                )
    return {
        "schools": school_rows,
        "majors": major_rows,
        "advisors": advisor_rows,
        "advisor_majors": link_rows,
        "reviews": review_rows,
    }


def _advisor(
    rng: random.Random, advisor_id: str, school: str, major: str, taken: set[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    while True:
        gender = "f" if rng.random() < 0.3 else "m"
        name = rng.choice(_FAMILY) + _given(rng, _GIVEN_F if gender == "f" else _GIVEN_M)
        if name not in taken and name not in _FAMOUS:
            taken.add(name)
            break
    title = rng.choices(list(TITLES), weights=[40, 30, 12, 18])[0]
    personality = rng.choice(list(PERSONALITIES))
    style = rng.choice(list(RESEARCH_STYLES))
    funding = rng.choices(list(FUNDING), weights=[4, 4, 2])[0]
    pool = list(DIRECTIONS[major])
    directions: list[str] = []
    for _ in range(rng.randint(1, 3)):  # the first three of a major's directions are the ones most people work on
        pick = rng.choices(pool, weights=[3 if i < 3 else 1 for i in range(len(pool))])[0]
        if pick not in directions:
            directions.append(pick)
    # Each dimension's centre follows the advisor's traits; every review scatters around it.
    centre = {
        "academic": {"教授": 4.2, "研究员": 4.0, "副教授": 3.7, "讲师": 3.3}[title] + rng.uniform(-0.6, 0.6),
        "funding": {"充足": 4.5, "一般": 3.3, "紧张": 2.2}[funding] + rng.uniform(-0.3, 0.3),
        "relationship": {"温和": 4.5, "负责": 4.4, "严格": 3.2, "放养": 3.6}[personality] + rng.uniform(-0.4, 0.4),
        "future": {"产业型": 4.3, "工程型": 3.9, "理论型": 3.6}[style] + rng.uniform(-0.5, 0.5),
    }
    its_reviews = []
    start = date(2019, 1, 1)
    for n in range(rng.randint(3, 12)):
        scores = {k: _clamp(rng.gauss(c, 0.6)) for k, c in centre.items()}
        when = start + timedelta(days=rng.randint(0, 6 * 365 + 300))
        grade = rng.randint(2016, max(2016, when.year - 1))
        degree = rng.choice([("硕士", "master's student"), ("博士", "PhD student")])
        parts = [
            _ACADEMIC[scores["academic"]],
            _RELATIONSHIP[personality]
            if scores["relationship"] >= 3
            else ("平时交流不多，有点距离感", "little contact, feels distant"),
            _STYLE[style],
            _FUNDING[scores["funding"]],
            _FUTURE[scores["future"]],
        ]
        chosen = sorted(rng.sample(range(len(parts)), rng.randint(2, 4)))
        its_reviews.append({
            "id": f"{advisor_id}-{n + 1:02d}",
            "advisor_id": advisor_id,
            "date": when.isoformat(),
            **scores,
            "overall": round(sum(scores.values()) / 4, 2),
            "text": "，".join(parts[i][0] for i in chosen) + "。",
            "text_en": "; ".join(parts[i][1] for i in chosen).capitalize() + ".",
            "author": f"{grade}级{degree[0]}",
            "author_en": f"{degree[1]}, class of {grade}",
        })  # fmt: skip
    mean = {k: round(sum(r[k] for r in its_reviews) / len(its_reviews), 2) for k in centre}
    overall = round(sum(mean.values()) / 4, 2)
    tags = [_TAGS[t][0] for t in (personality, style, funding) if t in _TAGS]
    if mean["academic"] >= 4.3:
        tags.append("学术大牛")
    if mean["future"] >= 4.3:
        tags.append("出路好")
    since = rng.randint(2012, 2022) if title == "讲师" else rng.randint(1995, 2019)
    papers = max(3, int(rng.gauss({"教授": 70, "研究员": 55, "副教授": 35, "讲师": 12}[title], 12)))
    directions_en = [DIRECTIONS[major][d] for d in directions]
    row = {
        "id": advisor_id,
        "name": name,
        "name_en": _pinyin(name),
        "gender": gender,
        "school": school,
        "major": major,
        "title": title,
        "research_directions": json.dumps(directions, ensure_ascii=False),
        "personality": personality,
        "research_style": style,
        "funding": funding,
        "papers": papers,
        "students": rng.randint(2, 25),
        "since": since,
        "bio": f"{since}年起任教于{school}，研究{('、'.join(directions))}，发表论文{papers}篇。",
        "bio_en": f"At the school since {since}; works on {', '.join(d.lower() for d in directions_en)}; {papers} papers.",
        "tags": json.dumps(tags, ensure_ascii=False),
        "overall": overall,
        "academic": mean["academic"],
        "funding_score": mean["funding"],
        "relationship": mean["relationship"],
        "future": mean["future"],
        "review_count": len(its_reviews),
    }
    return row, its_reviews


def ensure_catalog(engine: Engine) -> bool:
    """Create the tables and load the generated data once (idempotent, in one transaction: a store holds all of it
    or none; a store loaded by another generator version is emptied and loaded again). True if it loaded now."""
    create_tables(engine)
    if _loaded_version(engine) == GENERATOR_VERSION:
        return False
    rows = generate()
    try:
        with engine.begin() as conn:
            found = conn.execute(select(catalog_meta.c.value).where(catalog_meta.c.key == "generator")).scalar()
            if found == GENERATOR_VERSION:
                return False
            for table in (reviews, advisor_majors, advisors, majors, schools, catalog_meta):
                conn.execute(table.delete())
            for table, key in (
                (schools, "schools"),
                (majors, "majors"),
                (advisors, "advisors"),
                (advisor_majors, "advisor_majors"),
                (reviews, "reviews"),
            ):
                conn.execute(insert(table), rows[key])
            conn.execute(
                insert(catalog_meta),
                [{"key": "generator", "value": GENERATOR_VERSION}, {"key": "seed", "value": str(SEED)}],
            )
    except IntegrityError:  # another process loaded it at the same moment
        if _loaded_version(engine) != GENERATOR_VERSION:
            raise
        return False
    return True


def _loaded_version(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return conn.execute(select(catalog_meta.c.value).where(catalog_meta.c.key == "generator")).scalar()

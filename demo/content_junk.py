"""Spam and too-short texts in English and Chinese."""

from __future__ import annotations

import random
import string

from demo.content_fill import fill, items

_POOLS: dict[str, tuple[str, ...]] = {
    "product": items("""
        wireless earbuds, smart watch, weight loss tea, designer handbag, phone charger, LED strip
        lights, hair growth serum, gaming chair, anti-aging cream, air fryer, fitness tracker,
        electric toothbrush, massage gun, replica sneakers, teeth whitening kit, drone camera
    """),
    "brand": items("LuckyStar, MegaDeal, GoldRush, BestBuyNow, SuperSave, WinBig, TopChoice, FastCash, VIPClub, RoyalSpin"),
    "kw": items("""
        cheap flights, best vpn, car insurance quote, online casino, weight loss pills, payday
        loan, free movies, buy followers, crypto signals, work from home jobs, cheap hotels,
        replica watches, seo services, essay writing service
    """),
    "city": items("New York, London, Dubai, Las Vegas, Toronto, Sydney, Miami, Singapore"),
    "zh_product": items("""
        减肥茶, 美白面膜, 蓝牙耳机, 名牌包包, 保健品, 护肝片, 充电宝, 增高鞋垫, 防脱洗发水, 代购奶粉,
        高仿手表, 祛斑霜, 智能手环, 足浴盆
    """),
    "zh_brand": items("好物分享, 省钱攻略, 福利社, 优选好货, 财富密码, 今日特惠, 爆款推荐, 精选好物"),
    "zh_gift": items("内部资料, 独家秘籍, 现金红包, 会员月卡, 学习资料包, 精美礼品, 试用装"),
    "zh_service": items("搬家公司, 开锁换锁, 管道疏通, 家电维修, 空调清洗, 装修公司, 代办执照, 驾校报名"),
    "zh_city": items("北京, 上海, 广州, 深圳, 成都, 杭州, 武汉, 西安"),
}

_SPAM_EN: tuple[tuple[str, ...], ...] = (
    (
        "LIMITED OFFER!!! {product:cap} only ${#n}.99, click here to buy now: {url}",
        "Buy {product} online at the LOWEST price. Free shipping on orders over ${#n}!",
        "Hurry, only {#n} left in stock. Order today and save {#pct}%!",
        "Click here to buy >>> {url} <<< limited offer, act now!",
        "100% genuine {product}. Best price guaranteed. Contact {email}.",
    ),
    (
        "{kw} | best {kw} | cheap {kw} | {kw} near me | {kw} discount | {kw} online",
        "buy {kw} | {kw} deals | top {kw} {city} | {kw} reviews | {kw} free",
        "{kw} {kw} {kw} {kw} {kw}",
    ),
    (
        "Congratulations! You have been selected to receive a ${#big} gift card from {brand}.",
        "Claim your reward now at {url} before it expires in {#n} hours!",
        "This is NOT a joke. Reply with your name and address to claim your prize.",
        "Winners are chosen every day. Click the link: {url}",
    ),
    (
        "Earn ${#big} per week working from home! No experience needed!",
        "Contact {email} or WhatsApp {phone} to start today.",
        "Join {#big} people who already quit their jobs with {brand}!",
        "Only {#n} spots left. Sign up now: {url}",
    ),
    (
        "Join {brand} Casino today and get a {#pct}% bonus on your first deposit!",
        "Play now at {url} and win up to ${#big}!!!",
        "Free spins every day. VIP members get extra rewards. Call {phone}.",
    ),
    (
        "Need cash fast? Get approved in {#n} minutes! No credit check!",
        "Loans from ${#n}00 to ${#big}. Call {phone} now.",
        "Apply online at {url}. Bad credit OK. Money in your account today!",
    ),
)

_SPAM_ZH: tuple[tuple[str, ...], ...] = (
    (
        "【限时优惠】{zh_product}低至{#n}元！加微信{wx}领取优惠券，名额有限，先到先得！",
        "加微信{wx}，备注“优惠”，立减{#n}元！！！",
        "正品保证，假一赔十，全国包邮，加微信{wx}咨询。",
        "今天下单再送{zh_gift}，错过今天再等一年！",
    ),
    (
        "扫码关注公众号「{zh_brand}」，回复“福利”即可免费领取{zh_gift}！",
        "长按识别二维码，关注「{zh_brand}」，每天推送{zh_product}特价信息。",
        "扫码关注，转发朋友圈集满{#n}个赞，再送{zh_gift}！",
    ),
    (
        "{zh_city}{zh_service} {zh_city}{zh_service}电话 {zh_city}{zh_service}价格 {zh_city}{zh_service}哪家好",
        "{zh_city}{zh_service}公司 {zh_city}{zh_service}收费标准 专业{zh_service} 24小时{zh_service}",
        "{zh_service} {zh_service} {zh_service} 电话{phone}",
    ),
    (
        "在家兼职，日赚{#n}0元，手机就能操作，详情加QQ{qq}。",
        "宝妈、学生党都能做，每天只需{#n}分钟，当天结算！",
        "名额有限，想赚钱的速加微信{wx}！",
    ),
    (
        "急用钱？无抵押贷款，最快{#n}分钟到账，咨询热线{phone}。",
        "不看征信，不查流水，额度最高{#big}元！",
        "点击链接立即申请：{url}",
    ),
    (
        "代开各类发票，正规可查，联系电话{phone}。",
        "专业办理各类证件，加急{#n}天出证，微信{wx}。",
        "诚信经营，长期合作，欢迎来电咨询{phone}！",
    ),
)

_SHORT_EN = (
    "Thanks for sharing!", "Great post.", "Read more", "Page not found.", "Click to view the full story.",
    "Nice {noun}!", "See you on {day}.", "{adj:cap} {noun}.", "Comments are closed.", "Loading...",
    "No results found.", "Subscribe for updates.", "First!", "Agreed, {adj} point.", "Back to top",
    "Photo: {first} {last}", "Share this {noun}", "{place} weather update", "Login to reply.",
    "Lovely {noun} in {place}.",
)

_SHORT_ZH = (
    "谢谢分享！", "好文，收藏了。", "点击查看全文", "页面不存在。", "本帖已被删除", "顶一下", "{adj}的{n}！",
    "{weekday}见。", "暂无评论。", "加载中……", "没有找到相关结果。", "沙发！", "说得很{adj}。", "返回顶部",
    "楼主说得对", "已阅", "{place}欢迎你", "图片来自网络", "转发支持一下", "{place}的{n}真不错",
)


def _token(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _spam_fixed(rng: random.Random) -> dict[str, str]:
    site = _token(rng, string.ascii_lowercase, rng.randint(5, 9))
    return {
        "url": f"http://www.{site}.example/{_token(rng, string.ascii_lowercase + string.digits, 6)}",
        "email": f"{_token(rng, string.ascii_lowercase, 6)}{rng.randint(10, 99)}@mail.example",
        "phone": f"1{rng.randint(30, 89)}-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        "wx": _token(rng, string.ascii_lowercase, 4) + _token(rng, string.digits, 4),
        "qq": str(rng.randint(10_000_000, 999_999_999)),
        **{key: rng.choice(_POOLS[key]) for key in ("kw", "brand", "zh_brand", "zh_city", "zh_service")},
    }


def spam_document(rng: random.Random, lang: str) -> str:
    """Lines drawn (with repeats) from one or two spam template families."""
    families = _SPAM_ZH if lang == "zh" else _SPAM_EN
    chosen = rng.sample(families, rng.randint(1, 2))
    fixed = _spam_fixed(rng)
    lines = [fill(rng.choice(rng.choice(chosen)), _POOLS, rng, fixed) for _ in range(rng.randint(4, 14))]
    return "\n".join(lines)


def short_text(rng: random.Random, lang: str, pools: dict[str, tuple[str, ...]]) -> str:
    """A non-empty snippet under 50 characters."""
    templates = _SHORT_ZH if lang == "zh" else _SHORT_EN
    while True:
        text = fill(rng.choice(templates), pools, rng)
        if len(text) < 50:
            return text

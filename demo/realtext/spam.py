"""Ad copy for the development sets, written unlike the demo corpus's spam templates.

Real spam pages are ad copy in many trades: gambling, loans, fake certificates and invoices,
part-time jobs, counterfeit goods, training courses, SEO keyword pages. Each page mixes a few
lines of its trade with contact lines; no slot values are shared with the demo corpus. Ads are
also planted inside real passages (``interleave_ads``): the first set's from these trades, the
second set's from others (crypto, dating, tickets, free study materials, shop discounts).
"""

from __future__ import annotations

import random

_ZH_TRADES: tuple[tuple[str, ...], ...] = (
    ("{site}真人视讯，百家乐、龙虎斗、牛牛等{n}种玩法任你选。", "新会员注册即送{n}8元彩金，首存再送{pct}%！",
     "{site}官方直营，提款{n}分钟到账，信誉第一。", "时时彩、北京赛车、六合彩高赔率，天天返水{pct}%。"),
    ("无抵押无担保，凭身份证即可贷款{n}万元，当天放款。", "黑户白户均可办理，秒批秒到账，利息低至{pct}厘。",
     "急用钱找我们，{city}本地{n}年老牌信贷公司。", "征信不好也能下款，额度{n}000-{n}00000元。"),
    ("专业办理各类证件、刻章、{city}代开各类发票，可网上查验。", "毕业证、学位证、资格证，全国联网可查。",
     "增值税专用发票、普通发票，点数优惠，先验票后付款。", "诚信经营，保密快速，欢迎新老客户来电。"),
    ("招聘网络兼职打字员，日结{n}0-{n}00元，时间自由。", "宝妈学生党都能做，一部手机在家就能赚钱。",
     "手机刷信誉，佣金当天结算，多劳多得。", "名额有限，有意者私聊客服，非诚勿扰。"),
    ("{city}一手货源，大牌A货原单，与专柜品质一致。", "高仿名表、包包、鞋子，支持验货，不满意包退。",
     "厂家直销，全网最低价，量大从优，欢迎批发代理。", "招募代理，零门槛零囤货，一件代发。"),
    ("名师一对一辅导，{n}天提分{n}0分，无效退款。", "考研、考公、四六级、雅思托福通关保过班火热招生中。",
     "前{n}名报名享{pct}折优惠，免费试听两节课。", "金牌讲师团队，{n}万学员的共同选择。"),
    ("{city}网站建设_{city}网站优化_{city}网站推广_{site}", "百度首页排名，关键词快速上首页，按天扣费。",
     "网站SEO优化、整站优化、快照推广，不上首页不收费。", "{city}网络公司哪家好？{site}专注网络营销{n}年。"),
)
_ZH_CONTACT = ("客服VX：{wx}（长按复制）", "联系人：{name}经理 手机：{phone}", "QQ：{qq} 微信同号",
               "咨询热线：{phone}（24小时在线）", "官网：www.{domain}.com", "添加V信{wx}，备注来意",
               "详情请私信或致电{phone}", "地址：{city}市{district}区{n}号")
_ZH_CITIES = ("东莞", "佛山", "郑州", "长沙", "南宁", "温州", "泉州", "合肥", "昆明", "石家庄")
_ZH_DISTRICTS = ("天河", "南山", "高新", "开发", "城关", "新城")
_ZH_NAMES = ("李", "王", "张", "刘", "陈", "杨")
_SITES = ("金沙", "新葡京", "威尼斯人", "皇冠", "永利", "鸿运")

_EN_TRADES: tuple[tuple[str, ...], ...] = (
    ("Get your degree in {n} weeks, no exams, fully verifiable!", "Bachelor, Master and PhD diplomas available.",
     "Employers will never know. Discreet delivery worldwide."),
    ("Cheap meds online, no prescription required.", "Generic pills at {pct}% of pharmacy prices, shipped overnight.",
     "Bulk orders get a free bottle. Satisfaction guaranteed."),
    ("Make ${n}00 a day posting links from your phone!", "No boss, no schedule, no experience.",
     "Limited places this month, message us to reserve yours."),
    ("Luxury watches and bags, factory direct, mirror quality.", "Same materials as the originals at a tenth of the price.",
     "Wholesale and dropshipping welcome."),
)
_EN_CONTACT = ("Text {phone} or email sales{n}@{domain}.com", "Visit www.{domain}.com today",
               "WhatsApp / Telegram: {phone}", "Reply STOP to unsubscribe")
_DOMAINS = ("best-deal-zone", "vipgo88", "cheap4u", "luckyhub", "fastwin365", "trustpay24")


_ZH_TRADES_SECOND: tuple[tuple[str, ...], ...] = (
    ("比特币、以太坊合约带单，跟单{n}天收益翻倍。", "币圈老师每晚直播讲解行情，稳赚不赔的策略免费分享。"),
    ("同城交友，{city}单身男女在线等你，今晚就能见面。", "真实认证会员，{n}分钟匹配心动对象。"),
    ("演唱会门票、球赛门票内场位置现货，{city}同城可自取。", "订票热线全天开放，售完即止。"),
    ("关注本号，回复“资料”免费领取全套考试真题和讲义。", "整理了{n}G学习资料，转发本文即可获取下载链接。"),
    ("店庆大促，全场{n}折起，满{n}00减{n}0。", "进店报暗号再送小礼品，数量有限，先到先得。"),
)
_ZH_CONTACT_SECOND = ("添加微信：{wx}", "订票电话：{phone}", "群号：{qq}，进群领福利", "官网入口：https://{domain}.net",
                      "客服电话 {phone} 全天在线")
_EN_TRADES_SECOND: tuple[tuple[str, ...], ...] = (
    ("Turn ${n}00 into ${n}0,000 with our crypto signals.", "Join thousands of members earning every week."),
    ("Lonely tonight? Meet singles in {city_en} now.", "Verified profiles, instant chat, first month free."),
    ("Front row tickets for every sold-out show, delivered today.", "Best seats guaranteed or your money back."),
    ("Follow our page and get the complete exam pack for free.", "Share this post to unlock {n} bonus guides."),
    ("Flash sale: {pct}% off everything until midnight!", "Use code SAVE{n}{n} at checkout for an extra discount."),
)
_EN_CONTACT_SECOND = ("Call {phone_us} now", "Sign up at https://www.{domain}.net", "DM us on Telegram: @{wx}",
                      "Order online: www.{domain}.net/deal")
_EN_CITIES = ("Springfield", "Riverton", "Lakewood", "Fairview", "Georgetown")
AD_POOLS = {
    "1": {"zh": (_ZH_TRADES, _ZH_CONTACT), "en": (_EN_TRADES, _EN_CONTACT)},
    "2": {"zh": (_ZH_TRADES_SECOND, _ZH_CONTACT_SECOND), "en": (_EN_TRADES_SECOND, _EN_CONTACT_SECOND)},
}


def _fill(rng: random.Random, line: str) -> str:
    return line.format(
        n=rng.randint(2, 9), pct=rng.choice((5, 8, 10, 15, 20, 30)), city=rng.choice(_ZH_CITIES),
        district=rng.choice(_ZH_DISTRICTS), name=rng.choice(_ZH_NAMES), site=rng.choice(_SITES),
        wx=f"{rng.choice(('jx', 'hy', 'vip', 'kf'))}{rng.randint(1000, 99999)}", qq=rng.randint(10**7, 10**10),
        phone=f"1{rng.choice('3578')}{rng.randint(0, 9)}{rng.randint(10**7, 10**8 - 1)}",
        domain=rng.choice(_DOMAINS), city_en=rng.choice(_EN_CITIES),
        phone_us=f"+1 {rng.randint(200, 989)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
    )


def ad_page(rng: random.Random, lang: str) -> str:
    """One ad page in ``lang``: lines of one or two trades with contact lines between them."""
    trades, contacts = (_ZH_TRADES, _ZH_CONTACT) if lang == "zh" else (_EN_TRADES, _EN_CONTACT)
    lines = [_fill(rng, line) for trade in rng.sample(trades, rng.randint(1, 2)) for line in trade]
    rng.shuffle(lines)
    for _ in range(rng.randint(2, 4)):
        lines.insert(rng.randint(0, len(lines)), _fill(rng, rng.choice(contacts)))
    return "\n".join(lines)


def interleave_ads(rng: random.Random, text: str, lang: str, pool: str) -> tuple[str, list[str]]:
    """``text`` with two to four ad paragraphs (an ad line, often a contact line) between its paragraphs,
    one of them repeated on half the pages as spam pages repeat themselves; and the ad lines planted."""
    trades, contacts = AD_POOLS[pool][lang]
    separator = "\n\n" if "\n\n" in text else "\n"
    paragraphs = text.split(separator)
    ads = []
    for _ in range(rng.randint(2, 4)):
        lines = [_fill(rng, rng.choice(rng.choice(trades)))]
        if rng.random() < 0.7:
            lines.append(_fill(rng, rng.choice(contacts)))
        ads.append("\n".join(lines))
    if rng.random() < 0.5:
        ads.append(rng.choice(ads))
    for ad in ads:
        paragraphs.insert(rng.randint(1, len(paragraphs)), ad)
    planted = list(dict.fromkeys(line for ad in ads for line in ad.split("\n")))
    return separator.join(paragraphs), planted

"""Chinese word lists, sentence templates and layout strings for the demo corpus."""

from __future__ import annotations

import random

from demo.content_fill import items


def _words(block: str) -> tuple[str, ...]:
    return tuple(block.split())


POOLS: dict[str, tuple[str, ...]] = {
    "n": _words("""
        城市 乡村 学校 医院 工厂 市场 公园 图书馆 博物馆 车站 码头 河流 湖泊 山区 森林 草原 海岸
        道路 桥梁 社区 家庭 企业 政府 农民 工人 学生 教师 医生 作家 画家 工程师 商人 居民 游客
        儿童 老人 青年 朋友 邻居 同事 作品 文章 书籍 报告 数据 资料 记录 档案 地图 照片 电影
        音乐 歌曲 诗歌 小说 故事 传统 文化 历史 语言 文字 习俗 节日 建筑 寺庙 宫殿 城墙 街道
        广场 房屋 院子 花园 农田 果园 茶园 稻田 水库 渠道 港口 机场 铁路 公路 隧道 电站 网络
        系统 平台 设备 机器 工具 材料 技术 方法 模型 理论 观点 问题 现象 规律 趋势 结构 过程
        环境 资源 能源 气候 土壤 水质 空气 植物 动物 鸟类 鱼类 昆虫 树木 花卉 粮食 蔬菜 水果
        茶叶 服装 家具 产品 价格 成本 收入 消费 投资 贸易 交通 教育 医疗 住房 就业 安全 健康
        生活 工作 活动 会议 比赛 展览 演出 课程 考试 项目 计划 政策 制度 法律 标准 规则 目标
        任务 经验 知识 能力 信息 新闻 消息 意见 建议 决定 变化 影响 作用 关系 结果 原因 条件
        基础 特点 优势 困难 风险 机会 挑战 压力 需求 服务 管理 设计 生产 调查 实验 评价 合作
        交流 竞争 改革 传播 旅行 记忆 情感 梦想 希望 声音 颜色 光线 季节 天气 仓库 磨坊 渡船
        牧场 窑厂 书院 祠堂 戏台 集市
    """),
    "adj": _words("""
        重要 明显 复杂 简单 稳定 丰富 有限 独特 常见 普遍 关键 基本 主要 特殊 传统 现代 古老
        新兴 典型 积极 消极 显著 细微 持续 短暂 长期 直接 间接 合理 有效 安全 危险 清晰 模糊
        安静 热闹 干净 美丽 朴素 精致 宽阔 狭窄 温暖 寒冷 潮湿 干燥 明亮 昏暗 深厚 浓厚 广泛
        具体 抽象 灵活 严格 公开 私人 本地 偏远 繁华 完整 零散 真实 准确 粗略 快速 缓慢 平稳
        剧烈 温和 强烈 普通 优秀 成熟 年轻 健康 脆弱 坚固 昂贵 便宜 实用 必要 充足 稀缺 适当
        密切 均衡 多样 统一 独立 共同 初步 深入 系统 全面 局部 罕见 新颖 可靠 紧张 宽松 隐蔽
    """),
    "v": _words("""
        分析 研究 调查 记录 比较 讨论 评估 测量 观察 改善 提高 降低 扩大 减少 保护 修复 建设 设计
        开发 推动 支持 组织 管理 发布 公布 介绍 说明 解释 证明 检验 检查 整理 收集 保存 更新
        调整 完善 改进 优化 利用 引进 推广 探索 发现 描述 总结 规划 安排 处理 解决 应对 承担
        举办 建立 形成 改变 恢复 维护 监测 预测 模拟 估计 考察 采访 参观 考虑 关注 重视 提出
        采用 选择 确认 统计 计算 制定 实施 审查 批准 接受 拒绝 表达 描绘 记载 讲述 梳理 重建
    """),
    "adv": _words("逐渐 明显 迅速 缓慢 稳步 大幅 略微 普遍 基本 始终 仍然 往往 经常 偶尔 确实 显著"),
    "surname": _words("""
        王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 高 林 罗 郑 梁 谢 宋 唐 许 韩 冯 邓 曹
        彭 曾 肖 田 董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 金
        石 廖 贾 夏 韦 方 白 邹 孟 熊 秦 邱 江 尹 薛
    """),
    "given": _words("""
        伟 芳 娜 敏 静 丽 强 磊 军 洋 勇 艳 杰 娟 涛 明 超 秀兰 霞 平 刚 桂英 晓东 志强 建华 海燕
        文博 子涵 雨桐 浩然 思远 佳怡 一鸣 晨曦 欣怡 宇航 梓萱 俊杰 若曦 天佑 嘉怡 明轩 书瑶
        振国 丽华 春梅 国庆 立新 红梅 建国 晓明 婷婷 雪梅 永强 玉兰 志明 海涛 亚男 鹏飞 文静
        思琪 梦瑶 宏伟 家豪 雅琴 子轩 紫涵 浩宇 泽宇 欣然 诗涵 少华 秋实 远航 清扬 可馨
    """),
    "place": _words("""
        北京 上海 广州 深圳 成都 重庆 杭州 南京 武汉 西安 苏州 天津 长沙 郑州 青岛 沈阳 大连 厦门
        福州 昆明 贵阳 南宁 合肥 南昌 济南 太原 石家庄 哈尔滨 长春 兰州 西宁 银川 乌鲁木齐 拉萨
        呼和浩特 海口 三亚 桂林 丽江 大理 洛阳 开封 扬州 绍兴 宁波 温州 无锡 常州 徐州 泉州 汕头
        珠海 佛山 东莞 惠州 中山 绵阳 宜昌 襄阳 岳阳 九江 景德镇 赣州 遵义 曲靖 延安 宝鸡 敦煌
        嘉兴 湖州 台州 金华 舟山 烟台 威海 潍坊 临沂 保定 唐山 秦皇岛 大同 包头 吉林 丹东 锦州
        齐齐哈尔 牡丹江 芜湖 安庆 黄山 淮南 蚌埠 柳州 北海 三明 南平 龙岩 漳州
    """),
    "region": _words("""
        华北平原 长江中下游 珠江三角洲 云贵高原 黄土高原 四川盆地 东北平原 江南水乡 河西走廊 青藏高原
        闽南沿海 洞庭湖区 太湖流域 秦岭北麓 大兴安岭 塔里木盆地 胶东半岛 武夷山区 鄱阳湖畔 南岭山地
    """),
    "conn": items("""
        此外，同时，然而，因此，另一方面，总体来看，值得注意的是，与此同时，相比之下，事实上，
        一般来说，更重要的是，由此可见，尽管如此，具体而言，在这种情况下，换句话说，综合来看，
    """.replace("，", "，,")),
    "weekday": _words("周一 周二 周三 周四 周五 周六 周日"),
    "period": _words("本周 本月 今年 今年春季 今年夏季 今年秋季 今年冬季 上半年 下半年"),
    "field": _words("""
        海洋生态学 计算语言学 城市规划 土壤科学 行为经济学 公共卫生 材料科学 气候科学 发展心理学
        中世纪史 农业经济学 认知科学 流行病学 水文学 植物遗传学 社会政策 教育学 交通工程 森林生态学
        劳动经济学 社会语言学 政治学 考古学 天体物理学 营养学 环境法学 网络科学 有机化学 神经科学
        地理学 人口学 兽医学 鸟类学 海洋学 地震学 犯罪学 音乐学 建筑学 冰川学 能源政策 机器学习
        信息检索 语音处理 机器人学 作物学 海岸工程 艺术史 计量经济学 人文地理学 野生动物学
    """),
    "method": _words("""
        回归分析 田野调查 随机对照试验 面板数据模型 队列研究 内容分析 案例研究 遥感技术 对照实验
        结构化访谈 网络分析 纵向调查 空间统计 贝叶斯推断 混合研究方法 时间序列模型 参与式观察
        实验室检测 数值模拟 聚类分析 主成分分析 话语分析 档案研究 双重差分法 匹配样本 眼动追踪
        同位素分析 文本挖掘 元分析 多主体模型 生存分析 基因测序 无人机航测 声学监测 卫星影像
        焦点小组 问卷调查 准实验设计 显微观察 树木年轮分析
    """),
    "topic": _words("""
        土壤侵蚀 蛋白质折叠 城市热岛 阅读能力 人口迁移 收入差距 睡眠质量 河流污染 作物轮作 珊瑚白化
        住房密度 疫苗接种 社会信任 地下水下降 候鸟迁徙 语言接触 择校行为 空气质量 交通拥堵 降水变化
        森林退化 收入流动 双语教育 粮食安全 沿海洪水 市场竞争 在线学习 公共交通出行 儿童肥胖 记忆衰退
        湿地萎缩 塑料垃圾 高温胁迫 种子传播 旅游需求 能源需求 噪声暴露 水资源短缺 传粉昆虫减少
        渔业资源 词汇增长 投票率 农村贫困 土地利用 冰川退缩 干旱风险 物种丰富度 害虫抗药性 骨密度
        肌肉疲劳 糖分摄入 屏幕使用时间 社交媒体使用 远程办公 信贷获取 贸易开放 物价稳定 城市扩张
        氮素流失 冻土融化 海洋酸化 山火风险 外来物种入侵 劳动力供给 教师流动 医院容量 抗生素使用
        基因表达 细胞生长 酶活性 晶体结构 电池老化 光伏发电 风力发电 风暴潮 沙尘天气
    """),
    "measure": _words("""
        响应时间 错误率 增长率 存活率 作物产量 考试成绩 血压 体重 家庭收入 能源消耗 水质指数 物种数量
        排放水平 通勤时间 出勤率 心率 阅读速度 人员流动率 市场份额 租金水平 毕业率 氮含量 土壤湿度
        森林覆盖率 预期寿命 入学率 鱼类生物量 噪声水平 准确率 召回率 留存率 工资水平 治疗效果
        康复时间 泥沙含量 地表温度 积雪深度 水温 住院人数 劳动生产率
    """),
    "sample": _words("""
        农户 学生 患者 教师 工人 青少年 通勤者 居民 选民 护士 企业 学校 村庄 诊所 样地 溪流 湖泊
        林地 幼苗 参与者 志愿者 成年人 外来务工人员 退休人员 司机 商户 医院 班级 说话人 学习者
        运动员 游客 渔民 牧民 初创企业 街区 社区 流域 蜂群 鸟巢
    """),
    "tnoun": _words("""
        缓存 解析器 调度器 消息队列 工作进程 缓冲区 索引 令牌 会话 请求 响应 处理函数 路由 插件 模块
        软件包 客户端 服务端 连接 数据流 通道 线程 进程 流水线 任务 事件 消息 记录 批次 数据表 字段
        查询 游标 快照 备份 日志 指标 计数器 定时器 配置文件 模板 组件 服务 接口 代理 网关 驱动
        适配器 加载器 编码器 解码器 序列化器 校验器 格式化器 渲染器 编译器 解释器 分词器 注册表
        清单文件 容器 数据卷 集群 节点 副本 分片 互斥锁 回调 迭代器 沙箱 密钥 证书 校验和 请求头
        目录 文件 路径 压缩包
    """),
    "tverb": _words("""
        缓存 解析 调度 校验 序列化 压缩 解压 加密 索引 加载 存储 拉取 重试 刷新 合并 拆分 排序 过滤
        部署 配置 安装 注册 渲染 编译 调试 追踪 导出 导入 迁移 恢复 轮换 签名 验证 批量处理 转发
        编码 解码 更新 上传 下载 重新加载 监控 清理 同步 初始化
    """),
    "option": items("""
        max_workers, timeout, retry_limit, batch_size, log_level, cache_dir, buffer_size,
        chunk_size, queue_depth, flush_interval, read_only, strict_mode, dry_run, output_format,
        encoding, compression, backoff_factor, pool_size, max_connections, keep_alive, verbose,
        bind_address, port, data_dir, tmp_dir, shard_count, replica_count, follow_links,
        max_depth, page_size, sort_key, index_path, cert_file, key_file, region, namespace
    """),
    "datasource": _words("""
        本地文件 HTTP接口 对象存储 消息队列 标准输入 SQLite数据库 Kafka主题 Git仓库 网络共享目录
        CSV导出文件 环境变量 YAML文件 Redis缓存 远程服务器
    """),
    "topo_head": _words("""
        青 白 云 石 龙 桃 清 金 凤 梅 松 竹 柳 杏 黄 红 碧 翠 玉 银 长 永 太 安 兴 福 丰 大 东 西 南 北
        鹤 紫 朝 落 望 鹿 柏 枫 荷 灵 盘 卧 双 新 古 上 下
    """),
    "topo_tail": _words("""
        石 沙 溪 门 泉 源 水 岭 林 园 塘 花 岩 波 屏 乐 安 平 宁 隆 田 坪 山 坡 鹤 龙 云 阳 霞 海 鸣 桥
        梧 川 洲 浦 口 亭
    """),
    "sp_range": _words("华南 西南 东方 北方 高山 沼泽 滇 川 台湾 海南 藏 岭南 江南 秦岭 长白山 武夷 横断山 天山"),
    "sp_mark": _words("""
        红嘴 白眉 黑尾 黄腹 灰背 蓝翅 斑胸 长尾 短翅 金冠 褐顶 白喉 绿背 赤颈 花脸 纹腹 橙胸 黑枕
    """),
    "role": _words("""
        画家 作曲家 植物学家 工程师 诗人 数学家 建筑师 化学家 探险家 小说家 天文学家 医生 雕塑家
        历史学家 经济学家 发明家 摄影师 地质学家 语言学家 地图学家
    """),
    "structure": _words("石桥 古塔 城楼 楼阁 寺院 城堡 车站 水闸 堤坝 书院 钟楼 牌坊 戏楼 灯塔 驿站"),
    "material": _words("青砖 花岗岩 石灰岩 杉木 铸铁 砂岩 青瓦 钢筋混凝土 汉白玉 夯土 钢材 玻璃 琉璃瓦"),
    "food": _words("草籽 昆虫 蜗牛 蜘蛛 浆果 花蜜 蚯蚓 甲虫幼虫 藻类 嫩草 落果 苔藓 小鱼 水生昆虫"),
    "habitat": _words("湿润草甸 松树林 河岸 沿海沙丘 高山草地 岩石山坡 芦苇荡 老果园 石灰岩洞穴 山间溪流 盐沼 灌木丛"),
    "threat": _words("栖息地丧失 湿地排干 农药使用 道路修建 外来天敌 暖冬 森林砍伐 河流污染 光污染 过度放牧"),
    "econ": _words("渔业 旅游业 奶牛养殖 林业 造船 羊毛贸易 酿酒 小型工厂 采石 果树种植 航运 手工艺 制盐 茶叶种植"),
    "crop": _words("水稻 小麦 玉米 油菜 茶叶 柑橘 甘蔗 花生 大豆 苹果 葡萄 板栗"),
    "official": _words("市长 副市长 局长 新闻发言人 负责人 主任 专家 院长 校长 社区书记 处长 总工程师"),
    "institution": _words("""
        市政府 区政府 交通运输局 卫生健康委员会 教育局 自来水公司 港务局 气象台 住房保障中心 人民医院
        市场监督管理局 生态环境局 文化和旅游局 公安局 消防救援支队 统计局 机场集团 农业农村局 应急管理局
    """),
    "issue": _words("""
        住房价格 交通拥堵 供水紧张 房租上涨 学校合并 空气污染 防洪设施 看病排队 公交票价 停电问题
        青年就业 食品价格 街道安全 噪音扰民 预算削减 停车收费 游客数量 森林防火 台风灾害 供暖费用
        宽带覆盖 道路维修 垃圾分类 图书馆开放时间 教师短缺 农业补贴 渔业资源 桥梁检修 地铁延误 油价波动
    """),
    "event": _words("""
        暴雨 台风 地铁故障 大面积停电 高温天气 山体滑坡 文化节 马拉松比赛 贸易博览会 地震 山火 工厂火灾
        桥梁封闭 数据泄露 产品召回 丰收节 音乐会 自行车赛 书展 寒潮 水管爆裂 列车晚点 公益拍卖 灯会 龙舟赛
    """),
    "shop": _words("面包店 书店 五金店 咖啡馆 药店 自行车店 花店 肉铺 修理铺 杂货店 裁缝店 玩具店"),
    "nature": _words("""
        月光 柳枝 河水 晚风 山岗 灯火 果园 松树 海岸 潮水 麻雀 细雨 白雪 石桥 田野 山丘 山谷 芦苇
        烛光 云朵 星星 院子 老井 小路 炉火 霜花 晨雾 落叶 枝头 树根 海浪 小岛 悬崖 白鹭 钟声 窗台
        木门 长街 远山 湖面 玫瑰 荆棘 炊烟 尘土 羽毛 种子 珍珠 镜子 苹果 稻田 溪水 沙丘 雁群 渡口
        竹林 梅花 荷叶 灯塔
    """),
    "feeling": _words("""
        忧伤 思念 喜悦 沉默 回忆 希望 悲伤 温柔 耐心 惊奇 遗憾 渴望 恐惧 勇气 善意 孤独 欢喜 怜悯
        骄傲 怀疑 信念 羞愧 欣喜 安宁 愤怒 平静 感激 乡愁 眷恋 惆怅
    """),
    "color": _words("银白 金黄 灰色 苍白 蔚蓝 碧绿 深红 琥珀色 雪白 漆黑 淡紫 锈红 古铜色 象牙白 猩红 暗淡 翠绿 灰白 粉红 青铜色"),
    "lverb": _words("""
        沉睡 坠落 升起 燃烧 颤抖 等待 歌唱 漂流 徘徊 闪烁 消散 弯曲 破碎 转身 停留 低语 照耀 奔跑
        休憩 消失 聚拢 呼吸 起舞 哭泣 摇曳 流淌 飘落 沉没 苏醒 远去
    """),
    "when": _words("黄昏 黎明 夜晚 雨前 雨后 早春 深秋 午夜 冬天 清晨 整夜 月下 正午 最后一天 漫长的夏天 收割之后"),
    "item": _words("""
        订单 包裹 笔记本电脑 手机壳 外套 榨汁机 火车票 会员卡 发票 咖啡机 双肩包 运动鞋 台灯 显示器
        键盘 打印机 吸尘器 保温杯 耳机 路由器 床垫 沙发套 礼品卡 相机包 充电线 表带 帐篷 自行车锁
        电饭煲 空气净化器
    """),
    "problem": _words("""
        收到时已经损坏 尺码不对 用了两天就坏了 少了一个配件 一直没有送到 被重复扣款 无法开机 噪音很大
        颜色发错了 总是断开连接 屏幕有裂痕 送错了地址
    """),
    "remedy": _words("退款 换货 补发 免费维修 部分退款 优惠券补偿"),
    "relation": _words("姐姐 哥哥 母亲 父亲 表妹 奶奶 邻居 同事 朋友"),
    "greet": _words("你好 您好 在吗 客服你好 打扰一下 请问"),
    "ask_check": _words("麻烦帮我查一下。 能帮我看看吗？ 现在是什么情况？ 请问到哪里了？ 有最新进展吗？"),
    "if_ok": _words("如果可以的话 方便的话 可以的话 如果不麻烦的话"),
    "gift": _words("送 买来送 准备送 帮忙买给"),
    "ok": _words("好的 行 明白了 谢谢 了解"),
    "usually": _words("一般 通常 大概 最快"),
    "degree": _words("很 有点 特别 非常 挺"),
    "store": _words("门店 专卖店 服务网点 自提点"),
    "task": _words("自己打印快递单 自己打包 在家等快递员 保留发票 联系快递公司"),
    "fixing": _words("重启 重置 充电 重新安装 拔插 清理"),
    "still": _words("还是不行 问题依旧 一点用都没有 情况没有变化"),
    "thanks": _words("好的，谢谢 太感谢了 辛苦了 多谢"),
    "praise": _words("帮了大忙 效率真高 服务很周到 解决得很快"),
    "tracking": _words("一直没有更新 显示已签收 显示异常 停在处理中"),
    "shipping": _words("加急运费 礼品包装费 保价费 次日达费用"),
    "fix_verb": _words("维修 检测 更换 调试"),
    "service_point": _words("网点 售后点 维修店 服务中心"),
    "occasion": _words("要出差 要给孩子过生日 要参加考试 要搬家 要参加婚礼"),
    "sorry_user": _words("不好意思 抱歉 对了 还有"),
    "ask_do": _words("直接补发一个 帮我修好 给我回个电话 退回运费"),
    "hello": _words("您好 亲，您好 你好 下午好"),
    "thanks_contact": _words("感谢您的耐心等待 感谢您联系我们 已经收到您的反馈"),
    "please": _words("麻烦您 请您 辛苦您"),
    "send": _words("拍 发 上传"),
    "packaging": _words("外包装 快递面单 购物小票 序列号"),
    "photo": _words("照片 图片 短视频"),
    "apply": _words("申请了 办理了 安排了 登记了"),
    "expect": _words("预计 大约 一般 通常"),
    "done": _words("处理完毕 到账 完成 寄出"),
    "courier": _words("快递员 配送员 物流师傅"),
    "when_visit": _words("明天 今天下午 两天内 尽快"),
    "noted": _words("做了备注 登记了情况 加了说明"),
    "colleague": _words("后续同事 售后专员 仓库同事"),
    "follow": _words("跟进处理 联系您 再核实一遍"),
    "other": _words("其他问题 别的事情 什么地方"),
    "help_verb": _words("帮您处理 我们协助 帮您查询"),
    "bring": _words("带好面单 当场打印 帮您打包"),
    "also": _words("也 另外还 同时"),
    "check": _words("核实 查询 确认"),
    "info": _words("具体信息 物流状态 订单详情 库存情况"),
    "stock": _words("有货 暂时缺货 正在补货 已经发出"),
    "system": _words("系统记录 物流信息 快递公司的反馈"),
    "parcel": _words("离开分拨中心 到达中转站 完成扫描 被退回"),
    "escalate": _words("反馈 转交 上报"),
    "team": _words("售后团队 质检部门 仓库主管"),
    "reply": _words("回复您 联系您 给出方案"),
    "sure": _words("好的 没问题 可以"),
    "soon": _words("稍后 马上 今天之内"),
    "doc": _words("退货单 电子发票 确认函 退款明细"),
    "os": _words("Linux macOS Windows 树莓派 旧笔记本"),
    "hear": _words("听说 看到 关注"),
    "yes": _words("听说了 看到了 知道 当然"),
    "leisure": _words("散步 看书 约朋友 遛狗 吃午饭"),
    "weather": _words("不下雨 天气好 不太热 有空"),
    "travel": _words("一起走 坐公交 骑车 打车"),
    "booktype": _words("小说 散文集 游记 回忆录"),
    "part": _words("结尾 开头 主人公 文笔"),
    "move_time": _words("下个月 年底 春节后 秋天"),
    "hobby": _words("游泳 跑步 下棋 爬山 画画 烤面包"),
    "condition": _words("天晴的时候 有空的时候 膝盖不疼的时候 人少的时候"),
    "pet": _words("小猫 小狗 鹦鹉 兔子 乌龟"),
    "petname": _words("豆豆 球球 花花 小白 毛毛 年糕"),
    "season": _words("入冬 开学 过年 雨季"),
    "dish": _words("咖啡 面包 牛肉面 甜品 馄饨"),
    "relic": _words("文物 标本 手稿 照片 模型 信件"),
}

_ENCY_COMMON = (
    "{#year}年出版的《{place}志》对{subj}有{adj}的记载。",
    "{place}档案馆保存的资料把{subj}描述为{adj}而{adj}。",
    "{field}领域的学者常把{subj}作为研究{topic}的{adj}案例。",
    "{#year}年拍摄的照片里，{subj}旁边是一片{adj}的{n}。",
    "{place}地方史学会定期出版关于{subj}的{adj}简报。",
    "与{subj}有关的{#n}件{relic}现藏于{place}博物馆。",
    "{#year}年，{surname}{given}写过一首关于{subj}的{adj}诗。",
    "{#year}年发行的一枚{adj}邮票以{subj}为图案。",
    "{#year}年的一部纪录片播出后，{subj}受到{adj}关注。",
    "{#year}年前后，{place}的报纸上出现了不少关于{subj}的{adj}报道。",
)

TEMPLATES: dict[str, tuple[str, ...]] = {
    "academic": (
        "本研究考察了{topic}对{place}{sample}{measure}的影响。",
        "我们在{#n}个月内收集了{#big}份来自{sample}的样本。",
        "研究采用{method}，发现{topic}与{measure}之间存在{adj}的关联。",
        "{surname}{given}等人的早期工作主要关注{adj}条件下的{topic}。",
        "结果显示，当{topic}较为{adj}时，{measure}提高了百分之{#pct}。",
        "{conn}{method}为理解{topic}提供了{adj}的视角。",
        "我们对{place}附近{#n}个{sample}的分析表明，{measure}存在{adj}差异。",
        "{#year}年，{surname}{given}提出{topic}可以解释{measure}的{adj}变化。",
        "第二组实验利用{method}{v}了{n}，结果表明其作用相当{adj}。",
        "样本共包括{#big}名{sample}，其中百分之{#pct}来自{place}。",
        "这些发现与{field}中关于{topic}的{adj}理论基本一致。",
        "{conn}{adj}的{n}仍然是{field}研究者关注的重点。",
        "因此，我们把{topic}视为{adj}的影响因素，而不是直接原因。",
        "本研究的局限在于{n}的规模有限，{measure}也可能存在偏差。",
        "今后的研究应在更长的时间内{v}不同{sample}的{topic}。",
        "对照组的平均{measure}为{#dec}，受{topic}影响的一组则为{#dec}。",
        "{place}大学的{surname}{given}{v}了本文使用的{adj}{n}。",
        "与{method}相比，本文方法在{topic}方面更加{adj}。",
        "{conn}接触{topic}的{sample}在{#n}周内表现出{adj}的{measure}。",
        "模型假设{topic}与{topic}通过{adj}的{n}相互作用。",
        "我们用{method}估计了{topic}对{measure}的作用。",
        "本文的主要贡献是建立了一个连接{topic}与{field}的{adj}框架。",
        "对{#n}名{sample}的访谈显示，他们对{topic}普遍感到担忧。",
        "{#year}年在{place}开展的实地调查{v}了多个{adj}的{n}。",
        "在控制{topic}之后，{measure}的{adj}趋势基本消失。",
        "{field}领域很少有研究直接{v}{topic}。",
        "{topic}常被看作{field}中一个{adj}的问题。",
        "作者感谢{place}野外台站的工作人员提供的{adj}帮助。",
        "一个{adj}的规律随之出现：{topic}越突出，{measure}下降得越{adj}。",
        "我们合并了{place}和{place}两地的数据，用于{v}{measure}。",
        "审稿人建议我们进一步{v}{topic}所起的作用。",
        "图{#n}按照{topic}分组展示了{#n}个{sample}的{measure}。",
        "{conn}{sample}的{measure}在{#year}年以后{adv}上升。",
    ),
    "academic_title": (
        "{topic}对{sample}{measure}的影响：来自{place}的证据",
        "基于{method}的{topic}研究",
        "{field}视角下的{topic}与{measure}",
        "重新审视{topic}：一项{method}研究",
        "{place}{sample}的{topic}及其{adj}后果",
    ),
    "tech": (
        "{project}是一个用于{tverb}{tnoun}的{adj}工具库，主要面向{lang_name}项目。",
        "它会在{tnoun}{tverb}之前先检查每一个{tnoun}。",
        "你可以通过修改 `{option}` 设置来{tverb}{tnoun}。",
        "默认情况下，{tnoun}每秒最多处理{#n}个{tnoun}。",
        "设置 `{option}` 选项可以改变{tnoun}{tverb}{tnoun}的方式。",
        "如果{tnoun}失败，{project}会自动重试并记录一条{adj}的警告。",
        "在{tnoun}关闭之前，{tnoun}会把所有{tnoun}保存在内存中。",
        "{#n}.{#n}版本新增了对{adj}{tnoun}的支持。",
        "注意：在{tverb}{tnoun}之前，{tnoun}必须处于{adj}状态。",
        "{conn}{tnoun}也可以从{datasource}读取{tnoun}。",
        "每个{tnoun}提供{#n}个方法，下面列出最常用的几个。",
        "本文介绍如何一步步{tverb}一个{adj}的{tnoun}。",
        "较大的{tnoun}会按照 `{option}` 指定的大小切分。",
        "如果没有设置 `{option}`，{project}会从{datasource}读取它。",
        "旧版本无法{tverb}{adj}的{tnoun}，升级后即可解决。",
        "{tnoun}是线程安全的，多个工作进程可以同时{tverb}它。",
        "{tnoun}报错时会给出{tnoun}的名称和{adj}的提示。",
        "为了保证构建结果{adj}，建议固定{project}的版本。",
        "大多数用户只需要为每个{tnoun}{tverb}一次{tnoun}。",
        "{project}最初由{surname}{given}编写，用来在一家{adj}的公司里{tverb}{tnoun}。",
        "当 `{option}` 为假时，`{option}` 不起作用。",
        "在{#n}核机器上的测试表明，新的{tnoun}比旧版快{#n}倍。",
        "如果{tnoun}长时间没有响应，可以先检查{tnoun}的日志。",
    ),
    "tech_title": (
        "{project}：面向{lang_name}的{adj}{tnoun}",
        "{project}快速入门",
        "{project}使用指南",
        "如何用{project}{tverb}{tnoun}",
    ),
    "tech_list": (
        "`{option}`：控制{tnoun}如何{tverb}{tnoun}（默认值 {#n}）",
        "支持从{datasource}{tverb}{tnoun}",
        "支持{adj}的{tnoun}",
        "{tnoun}启动速度更快",
        "新增{adj}的{tnoun}",
        "`{option}` 的上限提高到 {#big}",
        "{tnoun}无法{tverb}时给出更清晰的错误信息",
    ),
    "ency_place_lead": ("{subj}是位于{region}的一个{kind}。",),
    "ency_place": (
        "{subj}距离{place}约{#n}公里，面积约{#big}公顷。",
        "{subj}最早见于{#year}年的记载，当时是一个{adj}的{n}。",
        "{#year}年，{subj}的人口约为{#big}人。",
        "当地经济主要依靠{econ}和{econ}。",
        "这里气候{adj}，冬季{adj}，夏季{adj}。",
        "著名景点包括古老的{n}、{adj}的{n}以及{subj}{n}。",
        "{#year}年，一条新建的{n}把{subj}与{place}连接起来。",
        "“{subj}”这个名字可能来源于当地对{n}的古称。",
        "每到{when}，{subj}都会举办{adj}的{event}，吸引来自{place}的游客。",
        "{subj}周边的农民主要种植{crop}和{crop}。",
        "建于{#year}年的{structure}至今仍矗立在{subj}中心。",
        "{#year}年的一场{event}曾给{subj}造成严重损失。",
        "{#year}年，从{place}出发的铁路修到了{subj}。",
        "{subj}的许多老人至今仍说着{adj}的方言。",
        *_ENCY_COMMON,
    ),
    "ency_species_lead": ("{subj}是一种{kind}，分布于{region}的{habitat}。",),
    "ency_species": (
        "成体长约{#n}厘米，体重可达{#n}克。",
        "它主要以{food}和{food}为食。",
        "{#year}年，{surname}{given}首次描述了这一物种。",
        "它{color}的斑纹和{adj}的体形使其很容易辨认。",
        "繁殖期在{when}前后，巢穴通常靠近{habitat}。",
        "由于{threat}，{#year}年以来其数量减少了百分之{#pct}。",
        "当地人给{subj}起的俗名大多与它{adj}的叫声有关。",
        "幼体大约{#n}天后离开巢穴独立生活。",
        "{subj}在{region}受到保护，但{threat}仍是一个日益严重的问题。",
        "{subj}在{when}最为活跃，常在{habitat}寻找{food}。",
        "在{region}的部分地区，它与近缘种的分布区相互重叠。",
        "{#year}年的野外手册称{subj}{adj}而{adj}。",
        "{#year}年的调查在{region}记录到约{#big}只{subj}。",
        *_ENCY_COMMON,
    ),
    "ency_person_lead": ("{subj}（{born}—{died}），{place}人，{adj}的{kind}，以研究{topic}闻名。",),
    "ency_person": (
        "{subj}早年就读于{place}大学，后来又在{place}{v}了{n}。",
        "{mid}年，{subj}发表了一部关于{topic}的{adj}著作。",
        "此后{subj}移居{place}，担任{kind}长达{#n}年。",
        "{subj}最著名的作品描绘了{region}的{topic}。",
        "评论家称赞{subj}早期作品风格{adj}。",
        "{mid}年，{subj}获得{place}学会颁发的奖章。",
        "{died}年，{subj}在{place}去世。",
        "{subj}与{surname}{given}的往来书信显示两人友谊{adj}。",
        "{place}的一座{n}以{subj}的名字命名。",
        "求学期间，{subj}曾在{place}用{#n}个月研究{topic}。",
        "{subj}在{place}的一所学院教授{field}多年。",
        "{#year}年，{surname}{given}出版了{subj}的传记。",
        "{subj}的一些{adj}笔记如今保存在{place}。",
        *_ENCY_COMMON,
    ),
    "ency_structure_lead": ("{subj}是位于{region}的一座{adj}的{kind}，建成于{#year}年。",),
    "ency_structure": (
        "它由{role}{surname}{given}设计。",
        "{subj}主要采用{material}和{material}建造。",
        "{subj}高{#n}米，曾是当地最高的{kind}。",
        "{#year}年的修缮更换了原有的{n}，并恢复了{adj}的{n}。",
        "如今{subj}向游客开放，内部设有一个小型{n}展览。",
        "{#year}年战乱期间，{subj}曾被用作{n}。",
        "当地传说{subj}建在一处{adj}的{n}之上。",
        "{subj}{adj}的正面朝向古老的{n}。",
        "{#year}年至{#year}年间，{subj}曾停止对外开放。",
        "当地工匠使用了从{place}运来的{material}。",
        "{#year}年{event}之后，来自{place}的工程师对{subj}进行了检查。",
        *_ENCY_COMMON,
    ),
    "news": (
        "{place}{institution}{weekday}通过了一项方案，着力解决{issue}问题。",
        "有关负责人表示，这项{n}预计投入约{#big}万元。",
        "{place}{official}{surname}{given}对记者表示，{issue}已经变得相当{adj}。",
        "{place}居民反映{issue}问题已有{#n}个月。",
        "此前{period}发生的{event}影响了约{#big}人。",
        "据{institution}统计，约百分之{#pct}的家庭受到影响。",
        "也有市民认为，这项{n}过于{adj}，而且不够{adj}。",
        "{conn}{institution}将于下月对{n}进行复核。",
        "{event}最初发生在{place}，随后波及周边{#n}个区县。",
        "当地商户预计{issue}将在年底前有所缓解。",
        "在{place}经营一家{shop}的{surname}{given}说，营业额下降了百分之{#pct}。",
        "{institution}的工作人员暂未就{issue}作出回应。",
        "{official}表示将采取{adj}措施{v}{issue}问题。",
        "{period}早些时候，{institution}发布了一份关于{issue}的{adj}报告。",
        "来自{place}的志愿者在{event}之后协助{v}{n}。",
        "{weekday}共有{#n}户居民被转移到{adj}的安置点。",
        "{place}{official}称目前形势{adj}，但总体可控。",
        "{weekday}，{place}境内一条公路临时封闭{#n}个小时。",
        "{#year}年的一场{event}也曾引发关于{issue}的讨论。",
        "分析人士提醒，如果不采取措施，{issue}可能上升百分之{#pct}。",
        "家住{n}附近的{surname}{given}说，这次{event}比以往更加{adj}。",
    ),
    "news_title": (
        "{place}{institution}出台新举措应对{issue}",
        "{event}影响{place}多地",
        "{issue}引发{place}居民关注",
        "{place}{official}公布{adj}的{n}计划",
        "{event}过后，{issue}如何解决",
    ),
    "poem": (
        "{when}，{color}的{nature}在{lverb}",
        "我在{color}的{nature}旁{lverb}",
        "{feeling}像{nature}一样{lverb}",
        "啊，{nature}，{adj}而{color}",
        "{nature}在{color}的光里{lverb}",
        "在{nature}与{nature}之间",
        "我们带着{feeling}穿过{nature}",
        "你的声音是{adj}的{nature}",
        "{nature}记得所有的{feeling}",
        "这里只有{nature}在{lverb}",
        "{feeling}是一片{adj}的{nature}",
        "{nature}守着它{color}的{feeling}",
        "让{nature}在{when}{lverb}吧",
        "多么{adj}，多么{adj}的{nature}",
    ),
    "fiction": (
        "{surname}{given}站在{color}的{nature}旁，想起了从前的{feeling}。",
        "窗外的{nature}显得{adj}，{nature}在风里{lverb}。",
        "自从那个{adj}的冬天离开{place}，她再也没见过{given}。",
        "“我们得在{nature}{lverb}之前离开。”{given}说。",
        "那件{n}在屋子{adj}的角落里放了整整{#n}年。",
        "他打开{n}，发现了一封{surname}{given}写来的信。",
        "村里已经没有人再提起那个{adj}的{n}。",
        "“你还记得{place}附近的{nature}吗？”她问。",
        "{n}里有一股{nature}和{nature}的气味。",
        "{given}笑了，可笑声背后藏着{feeling}。",
        "等到{nature}{lverb}的时候，{n}已经变得{adj}。",
        "他们沿着{nature}{adv}地走着，谁也没有说话。",
        "在{adj}的光线里，{n}看起来几乎有些{adj}。",
        "直到{when}，{given}才终于明白{n}里的{feeling}。",
        "母亲在架子上留着一件来自{place}的{n}。",
    ),
    "lit_title": ("{color}的{nature}", "{feeling}", "{when}的{nature}", "寄自{place}的信", "{adj}的{nature}"),
    "support_user": (
        "{greet}，我{period}买的{item}{problem}。",
        "我的订单号是{#big}，{ask_check}",
        "{if_ok}，我希望{remedy}。",
        "这是{gift}{relation}的，人在{place}。",
        "{ok}，{remedy}{usually}需要多长时间？",
        "{item}{problem}，而且外包装也{degree}{adj}。",
        "可以在你们{place}的{store}办理吗？",
        "{ok}，需要我{task}吗？",
        "我已经把{item}{fixing}了{#n}次，{still}。",
        "{thanks}，{praise}！",
        "物流信息从{weekday}开始就{tracking}。",
        "我额外付了{#n}元的{shipping}。",
        "{place}有没有能{fix_verb}的{service_point}？",
        "我{weekday}之前必须拿到，因为{occasion}。",
        "{sorry_user}，我忘了说{item}还{problem}。",
        "能不能{ask_do}，不用{remedy}了？",
        "{relation}说{place}的{store}{stock}，是真的吗？",
        "{item}的{info}能不能{send}给我看看？",
        "上次{remedy}等了{#n}天，这次{degree}着急。",
        "{sure}，那我{weekday}在家等{courier}。",
        "{item}用起来{degree}{adj}，就是{problem}。",
        "你们{system}里能看到{item}现在{parcel}了吗？",
    ),
    "support_agent": (
        "{hello}，{thanks_contact}，{item}{problem}给您添麻烦了。",
        "{please}{send}一张{item}和{packaging}的{photo}。",
        "已经为您{apply}{remedy}，{expect}{#n}个工作日内{done}。",
        "我们在{place}的{courier}会{when_visit}上门取件。",
        "我已经在订单{#big}里{noted}，{colleague}会{follow}。",
        "请问还有{other}需要{help_verb}的吗？",
        "不需要{task}，{courier}上门时会{bring}。",
        "理解您的心情，我们{also}可以为您办理{remedy}。",
        "请稍等，我正在{check}{item}的{info}。",
        "{item}目前在{place}仓库{stock}。",
        "根据{system}，包裹{weekday}已经{parcel}。",
        "我已经把问题{escalate}给{team}，{#n}小时内会{reply}。",
        "{sure}，我{soon}把{doc}发到您的邮箱。",
        "收到{item}以后，{remedy}{usually}需要{#n}个工作日。",
        "{item}属于{degree}{adj}的型号，{colleague}{soon}会{check}库存。",
        "给您带来不便{also}请多包涵，{remedy}{soon}就能{done}。",
        "{place}{service_point}的地址我{soon}发到您手机上。",
        "这边查到{item}在{weekday}已经{parcel}，{please}再等{#n}天。",
        "如果{item}还是{still}，可以直接申请{remedy}。",
        "{hello}，{item}的{info}我已经{check}过了，{expect}{weekday}送到。",
    ),
    "qa_question": (
        "怎样在不重启{tnoun}的情况下用{project}{tverb}{tnoun}？",
        "为什么设置了 `{option}` 以后，{tnoun}会把每个{tnoun}{tverb}两次？",
        "在另一个{tnoun}运行时{tverb}{tnoun}安全吗？",
        "从{datasource}{tverb}{adj}的{tnoun}，最好的做法是什么？",
        "{project}会按顺序{tverb}{tnoun}吗？",
        "升级到{#n}.{#n}以后，{tnoun}{tverb}{tnoun}变得很{adj}，这是为什么？",
        "`{option}` 和 `{option}` 可以同时配合{datasource}使用吗？",
        "{greet}，有没有办法只{tverb}{adj}的{tnoun}？",
    ),
    "qa_answer": (
        "可以把 `{option}` 设为 {#n}，然后重新{tverb}{tnoun}。",
        "这是因为{tnoun}在{tnoun}准备好之前就开始{tverb}了。",
        "可以，只要每个{tnoun}都有自己独立的{tnoun}。",
        "我一般按{#n}个一批来{tverb}，这样内存占用比较{adj}。",
        "先看看{tnoun}的日志，里面通常会有{adj}的提示。",
        "{thanks}，问题解决了，现在{tnoun}很{adj}。",
        "升级到{#n}.{#n}版本以后，{adj}的{tnoun}问题就没有了。",
        "先试试 `{option}`，{surname}{given}在{project}的文档里写过这个问题。",
        "不行，{tnoun}不是线程安全的，只能在一个进程里{tverb}。",
        "我在{os}上也遇到过，重新{tverb}{tnoun}以后就好了。",
    ),
    "chat": (
        "你{hear}{place}的{event}了吗？",
        "{yes}，我{relation}{weekday}正好在那儿，说场面很{adj}。",
        "我还是觉得{n}旁边那片{n}最适合{leisure}。",
        "{period}的{event}你去不去？",
        "看天气吧，要是{weather}就去，上次实在太{adj}了。",
        "我们{weekday}在{shop}门口见，然后{travel}过去。",
        "好主意，我顺便把从{given}那儿借的{n}带上。",
        "{surname}{given}的新{booktype}你看了吗？",
        "还没有，不过{given}说{part}很{adj}。",
        "你去过{place}的{n}以后告诉我感觉怎么样。",
        "{period}我花了{#n}个小时{fixing}我的{item}。",
        "说实话，这次{event}比我想的要{adj}。",
        "{given}{move_time}要搬到{place}去了。",
        "你{weekday}早上还去{hobby}吗？",
        "只有{condition}才去，最近工作太{adj}了。",
        "我{relation}刚养了一只{pet}，叫{petname}。",
        "对了，{given}上次{event}还欠我{#n}块钱。",
        "我们应该在{season}之前去一趟{place}。",
        "{place}路新开的那家{shop}，{dish}很{adj}。",
        "我{weekday}去尝过，{dish}{adj}是{adj}，就是有点贵。",
    ),
}

LAYOUT: dict[str, object] = {
    "joiner": "",
    "wrap": 30,
    "academic_sections": ("一、引言", "二、数据与方法", "三、研究结果", "四、讨论"),
    "abstract": "摘要",
    "tech_sections": ("快速开始", "配置说明", "使用方法", "示例", "常见问题", "接口概览", "性能说明", "设计说明"),
    "install": "安装",
    "install_lead": ("使用常用的包管理工具安装：", "只需执行一次：", "获取最新版本：", "在终端中运行：", "安装只需几秒钟："),
    "code_lead": ("例如：", "一个最小示例：", "下面的代码展示了基本用法：", "完整示例如下："),
    "list_lead": ("主要特性：", "功能概览：", "本次更新：", "常用选项："),
    "ency_sections": ("历史", "概况", "地理", "影响"),
    "speakers": {"support": ("用户", "客服"), "qa": ("问", "答"), "chat": ("甲", "乙")},
    "colon": "：",
}

_PLACE_KINDS = (
    ("镇", "古镇"), ("村", "村庄"), ("河", "河流"), ("湖", "湖泊"), ("山", "山峰"), ("岛", "岛屿"),
    ("峡", "峡谷"), ("乡", "乡镇"), ("渡", "渡口"), ("湾", "海湾"),
)
_ANIMAL_CLASS = {
    "鹀": "鸟类", "雀": "鸟类", "鹟": "鸟类", "鸫": "鸟类", "鹭": "鸟类", "莺": "鸟类", "鹛": "鸟类",
    "啄木鸟": "鸟类", "伯劳": "鸟类", "蛙": "两栖动物", "蝾螈": "两栖动物", "蜥": "爬行动物",
    "甲虫": "昆虫", "蝶": "昆虫", "蛾": "昆虫", "蜻蜓": "昆虫", "鼠": "小型哺乳动物", "蝙蝠": "小型哺乳动物",
}


def _toponym(rng: random.Random) -> str:
    return rng.choice(POOLS["topo_head"]) + rng.choice(POOLS["topo_tail"])


def ency_subject(rng: random.Random, kind: str) -> dict[str, str]:
    """Fixed slots (subj, kind) naming the subject of an encyclopedia article."""
    if kind == "place":
        suffix, name = rng.choice(_PLACE_KINDS)
        return {"subj": _toponym(rng) + suffix, "kind": name}
    if kind == "species":
        animal = rng.choice(tuple(_ANIMAL_CLASS))
        return {"subj": rng.choice(POOLS["sp_range"]) + rng.choice(POOLS["sp_mark"]) + animal, "kind": _ANIMAL_CLASS[animal]}
    if kind == "person":
        name = rng.choice(POOLS["surname"]) + rng.choice(POOLS["given"])
        return {"subj": name, "plast": name, "kind": rng.choice(POOLS["role"])}
    structure = rng.choice(POOLS["structure"])
    return {"subj": _toponym(rng) + structure, "kind": structure}

"""The control tables against the reference notes, and the bus parameters file."""


import pytest

from humanoid_description import AX12, XSERIES, load_config
from humanoid_hw import (
    CONTROL_TABLES,
    DynamixelConfig,
    block_decoder,
    control_table,
    decode_bits,
    load_hardware_config,
    model_name_for_number,
    stand_in_joint_map,
)

# (item, address, size) copied from the reference notes / the maker's e-manual.
AX12_TABLE = [("model_number", 0, 2), ("id", 3, 1), ("baud_rate", 4, 1), ("return_delay_time", 5, 1),
              ("min_position_limit", 6, 2), ("max_position_limit", 8, 2), ("max_torque", 14, 2),
              ("status_return_level", 16, 1), ("torque_enable", 24, 1), ("led", 25, 1), ("goal_position", 30, 2),
              ("goal_speed", 32, 2), ("torque_limit", 34, 2), ("present_position", 36, 2), ("present_speed", 38, 2),
              ("present_load", 40, 2), ("present_voltage", 42, 1), ("present_temperature", 43, 1),
              ("moving", 46, 1), ("lock", 47, 1), ("punch", 48, 2)]
X430_TABLE = [("model_number", 0, 2), ("id", 7, 1), ("baud_rate", 8, 1), ("return_delay_time", 9, 1),
              ("drive_mode", 10, 1), ("operating_mode", 11, 1), ("homing_offset", 20, 4),
              ("velocity_limit", 44, 4), ("max_position_limit", 48, 4), ("min_position_limit", 52, 4),
              ("status_return_level", 68, 1), ("torque_enable", 64, 1), ("led", 65, 1),
              ("hardware_error_status", 70, 1), ("position_d_gain", 80, 2), ("position_i_gain", 82, 2),
              ("position_p_gain", 84, 2), ("profile_acceleration", 108, 4), ("goal_speed", 112, 4),
              ("goal_position", 116, 4), ("moving", 122, 1), ("present_load", 126, 2), ("present_speed", 128, 4),
              ("present_position", 132, 4), ("present_voltage", 144, 2), ("present_temperature", 146, 1)]


@pytest.mark.parametrize("model", ["AX-12", "AX-12A", "AX-18"])
@pytest.mark.parametrize(("name", "address", "size"), AX12_TABLE)
def test_ax_addresses(model, name, address, size):
    item = control_table(model).item(name)
    assert (item.address, item.size) == (address, size)


@pytest.mark.parametrize("model", ["XL430", "XM430"])
@pytest.mark.parametrize(("name", "address", "size"), X430_TABLE)
def test_x_addresses(model, name, address, size):
    item = control_table(model).item(name)
    assert (item.address, item.size) == (address, size)


def test_model_numbers_protocols_and_scales():
    numbers = {name: (m.model_number, m.protocol) for name, m in CONTROL_TABLES.items()}
    assert numbers == {"AX-12": (12, 1), "AX-12A": (12, 1), "AX-18": (18, 1), "XL430": (1060, 2),
                       "XM430": (1020, 2)}
    assert control_table("AX-12").position_scale is AX12
    assert control_table("XL430").position_scale is XSERIES
    assert control_table("AX-12").max_torque_nm == 1.5
    assert model_name_for_number(12, 1) == "AX-12/AX-12A"
    assert model_name_for_number(1060, 1) == "unknown model"
    with pytest.raises(KeyError, match="supported: AX-12"):
        control_table("MX-28")


def test_cycle_blocks_are_the_contiguous_registers():
    ax, xl = control_table("AX-12"), control_table("XL430")
    assert (ax.state_block.start, ax.state_block.length) == (36, 8)  # position .. temperature
    assert (ax.command_block.start, ax.command_block.length) == (30, 4)  # goal position + moving speed
    assert (xl.state_block.start, xl.state_block.length) == (126, 21)  # load .. temperature
    assert (xl.command_block.start, xl.command_block.length) == (112, 8)  # profile velocity + goal


def test_items_encode_little_endian_and_signed_where_the_servo_is():
    xl = control_table("XL430")
    assert xl.item("present_speed").encode(-3) == b"\xfd\xff\xff\xff"
    assert xl.item("present_speed").decode(b"\x00\x00\xfd\xff\xff\xff\x00", start_address=126) == -3
    assert control_table("AX-12").item("goal_position").encode(512) == b"\x00\x02"


@pytest.mark.parametrize("model", sorted(CONTROL_TABLES))
def test_block_decoder_gives_what_each_item_decodes(model):
    table = control_table(model)
    block = table.state_block
    items = [table.item(name) for name in ("present_position", "present_speed", "present_load")]
    data = bytes((7 * i + 200) % 256 for i in range(block.length))  # high bits set: signs matter
    expected = tuple(item.decode(data, block.start) for item in items)
    assert block_decoder(items, block.start)(data) == expected
    assert block_decoder(items[::-1], block.start)(data) == expected[::-1]


def test_block_decoder_refuses_overlapping_items():
    table = control_table("AX-12")
    with pytest.raises(ValueError, match="overlaps"):
        block_decoder([table.item("present_position"), table.item("present_position")], 36)


def test_error_bits_have_names():
    assert decode_bits(0b0010_0100, {2: "overheating", 5: "overload"}) == ["overheating", "overload"]
    assert decode_bits(0b1000_0000, {}) == ["bit 7"]


def test_stand_in_joint_map_keeps_ids_and_directions():
    joint_map = load_config("bioloid").joint_map
    same = stand_in_joint_map(joint_map, 1)
    assert [s.model for s in same.values()] == ["AX-12"] * 18
    xl = stand_in_joint_map(joint_map, 2)
    assert [(s.servo_id, s.direction, s.model) for s in xl.values()] == [
        (s.servo_id, s.direction, "XL430") for s in joint_map.values()]


def test_bioloid_hardware_parameters():
    config = load_hardware_config("bioloid")
    assert config == DynamixelConfig(port="/dev/ttyUSB0", baud=1_000_000, protocol=1,
                                     return_delay=0, status_return_level=2, torque_on_start=True, retries=3,
                                     latency_timer_ms=16, answer_poll_us=100.0, on_missing="refuse", on_shutdown="limp",
                                     stale_probe_period=0.5, reopen_backoff_initial=0.1, reopen_backoff_max=2.0)
    assert load_hardware_config("bioloid", port="/dev/ttyUSB1").port == "/dev/ttyUSB1"


def test_bad_parameters_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="on_missing must be 'refuse' or 'degraded'"):
        DynamixelConfig(on_missing="ignore")
    with pytest.raises(ValueError, match="status_return_level must be 1 or 2"):
        DynamixelConfig(status_return_level=0)
    with pytest.raises(ValueError, match="answer_poll_us must be >= 0"):
        DynamixelConfig(answer_poll_us=-1.0)
    with pytest.raises(ValueError, match=r"unknown Dynamixel parameter.*prot"):
        DynamixelConfig.from_mapping({"prot": 1})
    with pytest.raises(FileNotFoundError, match="hoap2"):
        load_hardware_config("hoap2")

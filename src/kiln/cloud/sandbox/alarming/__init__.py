"""The simulated Aodh v2: alarms, their state and history, and notifications on firing.

``rules`` checks alarm documents, ``delivery`` sends notifications, ``model`` holds the
alarms, ``app`` serves ``/v2/alarms``, ``adapter`` is the in-process AlarmingApi.
"""
